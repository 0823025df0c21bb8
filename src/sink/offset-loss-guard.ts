import { describeError } from '../errors';
import { OffsetLossPolicy } from '../offsets';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { PartitionState } from './partition-state';
import { TaskLifecycle } from './task-lifecycle';
import { CompiledSinkTaskOptions } from './task-options';

/** The log start and end offsets of a partition (admin `fetchTopicOffsets` low and high), null when not listed. */
export type PartitionLogLookup = (topic: string, partition: number) => Promise<{ logStart: bigint; highWatermark: bigint } | null>;

/** Collaborators of the guard. */
export interface OffsetLossGuardParts {
  partitionLog: PartitionLogLookup;
  lifecycle: TaskLifecycle;
  metrics: AdjunctMetrics;
  log: Logger;
  /** Starts a new generation (policy reload). */
  reload: () => void;
  /** Counts lost offsets in the task's status. */
  countLost: (n: number) => void;
  /** Commits the partitions whose group position must be put back (policy fail), before the task fails. */
  restorePositions: () => Promise<void>;
}

/**
 * Run-time offset-out-of-range detection. A fetched batch that does not start at the partition's expected next offset
 * is checked against the log: a jump to an offset still in the log is compaction (or a replay after a rebalance),
 * an expected offset below the log start was deleted by retention, one past the log end no longer exists. The one
 * policy (`OffsetLossPolicy`) decides; never a silent skip.
 */
export class OffsetLossGuard {
  private readonly policy: OffsetLossPolicy;

  constructor(
    o: CompiledSinkTaskOptions,
    private readonly p: OffsetLossGuardParts,
  ) {
    this.policy = new OffsetLossPolicy({ pipeline: o.pipeline, policy: o.onOffsetOutOfRange, metrics: p.metrics, log: p.log });
  }

  /** Checks where a batch starts; returns false when the task must not process it (policy fail). */
  async admit(st: PartitionState, firstOffset: bigint): Promise<boolean> {
    const expected = st.expectedNext;
    if (expected === null || firstOffset === expected) return true;
    return this.judge(st, expected);
  }

  /**
   * Judges a partition whose log start passed its position while no batch came (the progress watchdog saw it): the
   * consumer resumes at `logStart`, so a batch arriving from there is not judged again. False when the task failed.
   */
  async behindLogStart(st: PartitionState, logStart: bigint): Promise<boolean> {
    const expected = st.expectedNext;
    if (expected === null || expected >= logStart) return true;
    st.expectedNext = logStart;
    try {
      return await this.judge(st, expected);
    } catch (e) {
      // Undecided (the log look-up failed): the next batch from the log start is judged instead.
      if (st.expectedNext === logStart) st.expectedNext = expected;
      throw e;
    }
  }

  /** The policy's decision on a partition whose consumer is no longer at `expected`, against its log now. */
  private async judge(st: PartitionState, expected: bigint): Promise<boolean> {
    const log = await this.p.partitionLog(st.topic, st.partition);
    if (!log) return true; // a partition the broker does not list has no log to compare with
    const decision = this.policy.decide({ topic: st.topic, partition: st.partition, expected, ...log });
    if (decision.kind === 'continue') return true;
    this.p.countLost(Number(decision.loss.lost));
    if (decision.kind === 'reload') this.p.reload();
    if (decision.kind !== 'fail') return true;
    // kafkajs committed its reset (earliest) over the group's position: put the position before the gap back first,
    // so a restart fails again instead of starting past the gap.
    st.restorePosition = true;
    await this.p
      .restorePositions()
      .catch((e) => this.p.log.warn({ err: describeError(e) }, 'restoring the group position failed; retried at stop'));
    this.p.lifecycle.fail(decision.error);
    return false;
  }
}
