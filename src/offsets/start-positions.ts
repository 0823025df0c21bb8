import { Admin } from 'kafkajs';
import { fetchPartitionOffsets } from '../bootstrap/topic-offsets';
import { KafkaRetryOptions } from '../kafka/kafka-retry';
import { topicPartitionKey } from '../kafka/topic-partition';
import { OffsetLoss, OffsetLossPolicy } from './offset-loss-policy';

/** What the start-up check leaves to the runner: whether a new generation is due, and what `latest` decided. */
export interface StartPositions {
  reload: boolean;
  /** Offsets lost in partitions that go on under `latest` (counted once, here). */
  lostOffsets: number;
  /** Where those partitions go on (their log start), by topic-partition key: the task expects its first batch there. */
  startAt: Map<string, bigint>;
}

/**
 * The start-up check: every partition's committed position against its log, decided by the one policy. `fail` throws
 * OFFSET_OUT_OF_RANGE naming every lost range (the group keeps its position); `latest` goes on from the log start
 * (the first offset still available, where the consumer's reset of an out-of-range position to the earliest offset
 * puts it; the group is not moved by an admin client, which would have to join it); `reload` asks for a new generation.
 * A coordinator that is not ready yet is retried (`retry`), then KAFKA_UNAVAILABLE.
 */
export async function checkStartPositions(
  admin: Admin,
  groupId: string,
  topics: string[],
  policy: OffsetLossPolicy,
  retry: KafkaRetryOptions = {},
): Promise<StartPositions> {
  const decisions = (await fetchPartitionOffsets(admin, groupId, topics, retry)).map((p) =>
    policy.decide({
      topic: p.topic,
      partition: p.partition,
      expected: p.committed,
      reset: p.reset,
      logStart: p.low,
      highWatermark: p.high,
    }),
  );
  const failed: OffsetLoss[] = [];
  const out: StartPositions = { reload: false, lostOffsets: 0, startAt: new Map() };
  for (const d of decisions) {
    if (d.kind === 'fail') failed.push(d.loss);
    if (d.kind === 'reload') out.reload = true;
  }
  if (failed.length) throw policy.error(failed);
  for (const d of decisions) {
    if (d.kind === 'continue' || d.kind === 'fail') continue;
    // A reset position is judged here, once: the task expects the log start there (its consumer's reset puts it there).
    if (d.loss.kind === 'reset') out.startAt.set(topicPartitionKey(d.loss.topic, d.loss.partition), d.loss.logStart);
    if (d.kind !== 'latest') continue;
    out.lostOffsets += Number(d.loss.lost);
    // A position past the log end stays the later one: the run-time guard sees the consumer's reset and goes on too.
    if (d.loss.kind === 'deleted') out.startAt.set(topicPartitionKey(d.loss.topic, d.loss.partition), d.resumeAt);
  }
  return out;
}
