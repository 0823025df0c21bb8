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
    // A judgement the progress watchdog started on this partition decides first (it may move the expected offset).
    if (st.judging !== undefined && !(await st.judging.catch(() => true))) return false;
    if (st.resetAtAssignment) {
      // Decided once, also for a batch and a pass-over of markers that meet it together; a failed log look-up throws,
      // and the batch kafkajs fetches again is judged then.
      st.resetJudging ??= this.resetBeforeStart(st.topic, st.partition)
        .then((go) => {
          st.resetAtAssignment = false;
          return go;
        })
        .finally(() => {
          st.resetJudging = undefined;
        });
      if (!(await st.resetJudging)) return false;
    }
    const expected = st.expectedNext;
    if (expected === null || firstOffset === expected) return true;
    return (await this.judge(st, expected)).go;
  }

  /**
   * A partition found at kafkajs's reset (-2) when the task starts (GroupPositions.snapshot), or when it is assigned
   * with no position known at start (its first batch): the policy decides as the start-up check does. Returns false
   * when the task failed (policy fail; the group keeps the reset, so a restart fails again). The consumer then resumes
   * at the log start, which becomes the partition's known position.
   */
  async resetBeforeStart(topic: string, partition: number): Promise<boolean> {
    const log = await this.p.partitionLog(topic, partition);
    if (!log) return true;
    const decision = this.policy.decide({ topic, partition, expected: null, reset: true, ...log });
    if (decision.kind === 'reload') this.p.reload();
    if (decision.kind !== 'fail') return true;
    this.p.lifecycle.fail(decision.error);
    return false;
  }

  /**
   * Judges a partition whose log start passed its position while no batch came (the progress watchdog saw it); a
   * batch arriving meanwhile waits for the decision. Once decided the partition is expected at the log start the
   * decision saw, so a batch from there is not judged again. False when the task failed. A failed log look-up decides
   * nothing: the expected offset stays, and the next check or batch judges again.
   */
  behindLogStart(st: PartitionState, logStart: bigint): Promise<boolean> {
    if (st.judging !== undefined) return st.judging;
    const expected = st.expectedNext;
    if (expected === null || expected >= logStart) return Promise.resolve(true);
    const judging = this.judge(st, expected)
      .then(({ go, logStart: seen }) => {
        // The policy let the gap go: the partition is expected at the log start, committed even if no record ever comes.
        if (go && seen !== undefined && st.expectedNext === expected && seen > expected) st.passOver(seen);
        return go;
      })
      .finally(() => {
        if (st.judging === judging) st.judging = undefined;
      });
    st.judging = judging;
    return judging;
  }

  /**
   * The policy's decision on a partition whose consumer is no longer at `expected`, against its log now: whether to go
   * on, and the log start the decision saw.
   */
  private async judge(st: PartitionState, expected: bigint): Promise<{ go: boolean; logStart?: bigint }> {
    const log = await this.p.partitionLog(st.topic, st.partition);
    if (!log) return { go: true }; // a partition the broker does not list has no log to compare with
    const decision = this.policy.decide({ topic: st.topic, partition: st.partition, expected, ...log });
    if (decision.kind === 'continue') return { go: true, logStart: log.logStart };
    this.p.countLost(Number(decision.loss.lost));
    if (decision.kind === 'reload') this.p.reload();
    if (decision.kind !== 'fail') {
      // A position past the log end (topic recreated) no longer exists: commits start over from the new log's offsets,
      // which are below it (else the group would keep kafkajs's reset until the new log passed the old position).
      if (decision.loss.kind === 'pastEnd') st.committed = null;
      return { go: true, logStart: log.logStart };
    }
    // kafkajs committed its reset (earliest) over the group's position: put the position before the gap back first,
    // so a restart fails again instead of starting past the gap.
    st.restorePosition = true;
    await this.p
      .restorePositions()
      .catch((e) => this.p.log.warn({ err: describeError(e) }, 'restoring the group position failed; retried at stop'));
    this.p.lifecycle.fail(decision.error);
    return { go: false };
  }
}
