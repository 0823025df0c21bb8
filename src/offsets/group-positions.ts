import { Admin } from 'kafkajs';
import { topicPartitionKey } from '../kafka/topic-partition';
import { committedOffsetOf } from './committed-offset';

/**
 * A consumer group's committed positions as the store knows them. kafkajs, on OFFSET_OUT_OF_RANGE, commits its reset
 * (-2, earliest) over the group's position before the task sees a batch: the positions taken when the task starts,
 * before its consumer runs, stand in for a partition whose committed offset was reset that way, so the lost range is
 * still known.
 */
export class GroupPositions {
  private readonly atStart = new Map<string, bigint>();

  constructor(
    private readonly admin: Pick<Admin, 'fetchOffsets'>,
    private readonly groupId: string,
  ) {}

  /** Takes the group's committed positions of `topics` (before the task's consumer runs). */
  async snapshot(topics: string[]): Promise<void> {
    if (!topics.length) return;
    for (const t of await this.admin.fetchOffsets({ groupId: this.groupId, topics }))
      for (const p of t.partitions) {
        const offset = committedOffsetOf(p.offset);
        if (offset !== null) this.atStart.set(topicPartitionKey(t.topic, p.partition), offset);
      }
  }

  /** The group's committed offset of a partition (next record to read); the one seen at start when kafkajs reset it. */
  async committed(topic: string, partition: number): Promise<bigint | null> {
    const [t] = await this.admin.fetchOffsets({ groupId: this.groupId, topics: [topic] });
    const offset = committedOffsetOf(t?.partitions.find((p) => p.partition === partition)?.offset);
    return offset ?? this.atStart.get(topicPartitionKey(topic, partition)) ?? null;
  }
}
