import { AdjunctError } from '../errors';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';

/** `onOffsetOutOfRange`: what to do when a partition's expected next offset is no longer in its log. */
export type OffsetOutOfRangePolicy = 'fail' | 'reload' | 'latest';

/** Where a partition stands: the offset the store expects to read next (committed or last processed + 1) and its log. */
export interface PartitionPosition {
  topic: string;
  partition: number;
  /** Next offset the store expects; null (or a negative kafkajs sentinel) when it has no position. */
  expected: bigint | null;
  /** The position was kafkajs's reset (-2) committed over the group's own (isConsumerReset): what it replaced is unknown. */
  reset?: boolean;
  /** First offset still in the log (admin `fetchTopicOffsets` low). */
  logStart: bigint;
  /** Log end offset (admin `fetchTopicOffsets` high). */
  highWatermark: bigint;
}

/**
 * An expected offset that is not in the log. `deleted`: retention removed offsets [from, to] before the store saw
 * them (`lost` = to − from + 1). `pastEnd`: the expected offset lies beyond the log end (the log was truncated or the
 * topic recreated), nothing is known lost (`lost` = 0) but the store's position does not exist. `reset`: a consumer
 * found the group's position out of range and kafkajs committed its reset to the earliest offset over it before the
 * store judged it (a worker killed in between): records before the log start may be lost, how many is unknown
 * (`lost` = 0, `expected` = `from` = the log start).
 */
export interface OffsetLoss {
  topic: string;
  partition: number;
  kind: 'deleted' | 'pastEnd' | 'reset';
  expected: bigint;
  from: bigint;
  to: bigint;
  lost: bigint;
  logStart: bigint;
  highWatermark: bigint;
}

/** A policy's decision for one partition (policies return decisions; the caller carries them out). */
export type OffsetLossDecision =
  | { kind: 'continue' }
  | { kind: 'fail'; loss: OffsetLoss; error: AdjunctError }
  | { kind: 'reload'; loss: OffsetLoss }
  /** Go on from the first offset still in the log: skipping records that still exist would be a second, silent loss. */
  | { kind: 'latest'; loss: OffsetLoss; resumeAt: bigint };

/** The loss at a position, or null when the expected offset is in the log (or there is none). */
export function offsetLossAt(p: PartitionPosition): OffsetLoss | null {
  const { expected, logStart, highWatermark } = p;
  if (p.reset && (expected === null || expected < 0n))
    return {
      topic: p.topic,
      partition: p.partition,
      kind: 'reset',
      expected: logStart,
      from: logStart,
      to: logStart - 1n,
      lost: 0n,
      logStart,
      highWatermark,
    };
  if (expected === null || expected < 0n) return null;
  const at = { topic: p.topic, partition: p.partition, expected, logStart, highWatermark };
  if (expected < logStart) return { ...at, kind: 'deleted', from: expected, to: logStart - 1n, lost: logStart - expected };
  if (expected > highWatermark) return { ...at, kind: 'pastEnd', from: expected, to: expected - 1n, lost: 0n };
  return null;
}

/** How a loss reads in logs and errors: `topic/0 offsets 100..149 (50 records) were deleted by retention …`. */
export function describeOffsetLoss(l: OffsetLoss): string {
  if (l.kind === 'deleted')
    return `${l.topic}/${l.partition} offsets ${l.from}..${l.to} (${l.lost} records) were deleted by retention before the store read them`;
  if (l.kind === 'pastEnd')
    return `${l.topic}/${l.partition} expected offset ${l.expected} is past the log end ${l.highWatermark} (log truncated or topic recreated)`;
  return `${l.topic}/${l.partition} group position was reset to the earliest offset by the consumer after an out-of-range fetch (kafkajs committed -2 over it) before the store judged it: records before the log start ${l.logStart} may be lost, how many is unknown`;
}

/** The OFFSET_OUT_OF_RANGE error naming every lost range. */
export function offsetLossError(pipeline: string, losses: OffsetLoss[]): AdjunctError {
  const what = losses.map(describeOffsetLoss).join(', ');
  const [first] = losses;
  return new AdjunctError(`pipeline ${pipeline}: ${what}; onOffsetOutOfRange=fail`, {
    code: 'OFFSET_OUT_OF_RANGE',
    stage: 'consume',
    context: { topic: first.topic, partition: first.partition, from: first.from.toString(), to: first.to.toString() },
  });
}

/** What the policy needs: the pipeline, its configured policy, and where to log and count. */
export interface OffsetLossPolicyOptions {
  pipeline: string;
  policy: OffsetOutOfRangePolicy;
  metrics: AdjunctMetrics;
  log: Logger;
}

/**
 * The one offset-out-of-range policy, used at start-up (committed position) and at run time (expected next offset).
 * A loss is always logged `OFFSET OUT OF RANGE` and its lost offsets counted in `adjunct_offsets_lost_total`; then
 * `fail` stops, `reload` starts a new generation, `latest` goes on from the log start. Never a silent skip.
 */
export class OffsetLossPolicy {
  constructor(private readonly o: OffsetLossPolicyOptions) {}

  /** The OFFSET_OUT_OF_RANGE error of this pipeline naming every lost range. */
  error(losses: OffsetLoss[]): AdjunctError {
    return offsetLossError(this.o.pipeline, losses);
  }

  /** The policy's decision for one partition's position; logs and counts a loss. */
  decide(position: PartitionPosition): OffsetLossDecision {
    const loss = offsetLossAt(position);
    if (!loss) return { kind: 'continue' };
    const { pipeline, policy } = this.o;
    if (loss.lost > 0n)
      this.o.metrics.lostOffsets.inc({ pipeline, topic: loss.topic, partition: String(loss.partition) }, Number(loss.lost));
    const then =
      policy === 'fail'
        ? 'the pipeline stops; the group keeps its position'
        : policy === 'reload'
          ? 'a new generation is built from what the log still holds'
          : `continuing from the log start ${loss.logStart}; the lost records are NOT in the store`;
    this.o.log.error(
      {
        topic: loss.topic,
        partition: loss.partition,
        from: loss.from.toString(),
        to: loss.to.toString(),
        lost: loss.lost.toString(),
        logStart: loss.logStart.toString(),
        highWatermark: loss.highWatermark.toString(),
        policy,
      },
      `OFFSET OUT OF RANGE: pipeline ${pipeline}: ${describeOffsetLoss(loss)}; policy=${policy}: ${then}`,
    );
    if (policy === 'fail') return { kind: 'fail', loss, error: this.error([loss]) };
    if (policy === 'reload') return { kind: 'reload', loss };
    return { kind: 'latest', loss, resumeAt: loss.logStart };
  }
}
