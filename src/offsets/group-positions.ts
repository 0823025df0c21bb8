import { Admin } from 'kafkajs';
import { KafkaRetryOptions, withKafkaRetry } from '../kafka/kafka-retry';
import { topicPartitionKey } from '../kafka/topic-partition';
import { committedOffsetOf, CONSUMER_RESET, isConsumerReset } from './committed-offset';

/** The later of two positions (null: none). */
const later = (a: bigint | null | undefined, b: bigint | null | undefined): bigint | null =>
  a === null || a === undefined ? (b ?? null) : b === null || b === undefined || a >= b ? a : b;

/**
 * A consumer group's committed positions as the store knows them. A group's position only moves forward, except
 * when kafkajs, on OFFSET_OUT_OF_RANGE, commits its reset (-2, earliest) over it before the task sees a batch: the
 * position of a partition is therefore the later of its committed offset now and the one taken when the task
 * started (before its consumer ran), or decided then (policy latest at start: the log start). So the lost range is
 * still known after kafkajs's reset, and a gap decided at start is not counted twice.
 */
export class GroupPositions {
  private readonly atStart = new Map<string, bigint>();
  /** Partitions whose reset (-2) the start-up check judged: not judged again when assigned. */
  private readonly resetAtStart = new Set<string>();

  constructor(
    private readonly admin: Pick<Admin, 'fetchOffsets'>,
    private readonly groupId: string,
    /** Positions decided before the task starts, by topic-partition key. */
    private readonly decided: ReadonlyMap<string, bigint> = new Map(),
    private readonly retry: KafkaRetryOptions = {},
  ) {}

  /**
   * Takes the group's committed positions of `topics` (before the task's consumer runs). Returns the partitions whose
   * position is kafkajs's reset (-2) with nothing known before it: a consumer reset them after an out-of-range fetch and
   * no one judged the gap (the task that saw it failed or was killed first), so the loss policy must decide now.
   */
  async snapshot(topics: string[]): Promise<{ topic: string; partition: number }[]> {
    for (const [k, offset] of this.decided) this.atStart.set(k, offset);
    if (!topics.length) return [];
    const committed = await withKafkaRetry(
      `fetching the committed offsets of group ${this.groupId}`,
      () => this.admin.fetchOffsets({ groupId: this.groupId, topics }),
      this.retry,
    );
    const reset: { topic: string; partition: number }[] = [];
    for (const t of committed)
      for (const p of t.partitions) {
        const k = topicPartitionKey(t.topic, p.partition);
        if (isConsumerReset(p.offset) && !this.atStart.has(k)) {
          reset.push({ topic: t.topic, partition: p.partition });
          this.resetAtStart.add(k);
        }
        const offset = later(committedOffsetOf(p.offset), this.atStart.get(k));
        if (offset !== null) this.atStart.set(k, offset);
      }
    return reset;
  }

  /**
   * The position of a partition (next record to read): the later of the group's committed offset and the one at start.
   * CONSUMER_RESET when the group holds kafkajs's reset (-2) and nothing was known at start (a partition assigned
   * without a position then, reset since by another member that met the gap and stopped before judging it): the loss
   * policy must decide, as for a reset found at start.
   */
  async committed(topic: string, partition: number): Promise<bigint | null | typeof CONSUMER_RESET> {
    const [t] = await this.admin.fetchOffsets({ groupId: this.groupId, topics: [topic] });
    const raw = t?.partitions.find((p) => p.partition === partition)?.offset;
    const k = topicPartitionKey(topic, partition);
    const known = this.atStart.get(k);
    if (isConsumerReset(raw) && known === undefined && !this.resetAtStart.has(k)) return CONSUMER_RESET;
    return later(committedOffsetOf(raw), known);
  }
}
