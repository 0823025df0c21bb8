import { Admin } from 'kafkajs';
import { fetchPartitionOffsets } from '../bootstrap/topic-offsets';
import { OffsetLoss, OffsetLossPolicy } from './offset-loss-policy';

/** What the start-up check leaves to the runner: whether a new generation is due, and the offsets lost under `latest`. */
export interface StartPositions {
  reload: boolean;
  lostOffsets: number;
}

/**
 * The start-up check: every partition's committed position against its log, decided by the one policy. `fail` throws
 * OFFSET_OUT_OF_RANGE naming every lost range (the group keeps its position); `latest` moves the group to the log
 * start (the first offset still available); `reload` asks for a new generation.
 */
export async function checkStartPositions(
  admin: Admin,
  groupId: string,
  topics: string[],
  policy: OffsetLossPolicy,
): Promise<StartPositions> {
  const decisions = (await fetchPartitionOffsets(admin, groupId, topics)).map((p) =>
    policy.decide({ topic: p.topic, partition: p.partition, expected: p.committed, logStart: p.low, highWatermark: p.high }),
  );
  const failed: OffsetLoss[] = [];
  const out: StartPositions = { reload: false, lostOffsets: 0 };
  for (const d of decisions) {
    if (d.kind === 'fail') failed.push(d.loss);
    if (d.kind === 'reload') out.reload = true;
  }
  if (failed.length) throw policy.error(failed);
  for (const d of decisions) {
    if (d.kind !== 'latest') continue;
    const { topic, partition, lost } = d.loss;
    await admin.setOffsets({ groupId, topic, partitions: [{ partition, offset: d.resumeAt.toString() }] });
    out.lostOffsets += Number(lost);
  }
  return out;
}
