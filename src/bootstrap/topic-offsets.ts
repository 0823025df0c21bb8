import { Admin } from 'kafkajs';
import { KafkaRetryOptions, withKafkaRetry } from '../kafka/kafka-retry';
import { topicPartitionKey } from '../kafka/topic-partition';
import { committedOffsetOf, isConsumerReset } from '../offsets/committed-offset';

/** Low/high watermarks and the group's committed offset of one partition. */
export interface PartitionOffsets {
  topic: string;
  partition: number;
  low: bigint;
  high: bigint;
  /** Committed offset of the group (next record to read), or null when the group has none (kafkajs's negative sentinels included). */
  committed: bigint | null;
  /** The group's position is kafkajs's reset sentinel (-2): a consumer found it out of range and reset it (isConsumerReset). */
  reset?: boolean;
}

/**
 * Fetches log start/end offsets of topics and the group's committed offsets in one pass. A coordinator or leader that
 * is not ready yet (a fresh or restarted broker: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS…) is retried with
 * backoff; KAFKA_UNAVAILABLE after the bound.
 */
export async function fetchPartitionOffsets(
  admin: Pick<Admin, 'fetchOffsets' | 'fetchTopicOffsets'>,
  groupId: string,
  topics: string[],
  retry: KafkaRetryOptions = {},
): Promise<PartitionOffsets[]> {
  const out: PartitionOffsets[] = [];
  const committed = await withKafkaRetry(
    `fetching the committed offsets of group ${groupId}`,
    () => admin.fetchOffsets({ groupId, topics }),
    retry,
  );
  const committedMap = new Map<string, bigint | null>();
  const reset = new Set<string>();
  for (const t of committed)
    for (const p of t.partitions) {
      const k = topicPartitionKey(t.topic, p.partition);
      committedMap.set(k, committedOffsetOf(p.offset));
      if (isConsumerReset(p.offset)) reset.add(k);
    }
  for (const topic of topics) {
    const offs = await withKafkaRetry(`fetching the offsets of topic ${topic}`, () => admin.fetchTopicOffsets(topic), retry);
    for (const p of offs) {
      out.push({
        topic,
        partition: p.partition,
        low: BigInt(p.low),
        high: BigInt(p.high),
        committed: committedMap.get(topicPartitionKey(topic, p.partition)) ?? null,
        reset: reset.has(topicPartitionKey(topic, p.partition)),
      });
    }
  }
  return out;
}
