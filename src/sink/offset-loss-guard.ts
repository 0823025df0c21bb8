import { AdjunctError } from '../errors';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { PartitionState } from './partition-state';
import { TaskLifecycle } from './task-lifecycle';
import { CompiledSinkTaskOptions } from './task-options';

/** Offsets deleted by retention before the task read them: [from, to] of one partition. */
export interface OffsetLoss {
  topic: string;
  partition: number;
  from: bigint;
  to: bigint;
}

/** The log start offset of a partition (admin `fetchTopicOffsets` low). */
export type LogStartLookup = (topic: string, partition: number) => Promise<bigint>;

/** Collaborators of the guard. */
export interface OffsetLossGuardParts {
  logStart: LogStartLookup;
  lifecycle: TaskLifecycle;
  metrics: AdjunctMetrics;
  log: Logger;
  /** Starts a new generation (policy reload). */
  reload: () => void;
  /** Counts lost offsets in the task's status. */
  countLost: (n: number) => void;
}

/**
 * Run-time offset-out-of-range detection. A fetched batch that starts past the partition's expected next offset is
 * a loss only when the expected offset is below the log start (retention deleted it); a jump to an offset still in
 * the log is compaction or a transaction marker. Policy: fail stops the pipeline, reload starts a new generation,
 * latest logs and counts the gap. Never a silent skip.
 */
export class OffsetLossGuard {
  constructor(
    private readonly o: CompiledSinkTaskOptions,
    private readonly p: OffsetLossGuardParts,
  ) {}

  /** Checks where a batch starts; returns false when the task must not process it (policy fail). */
  async admit(st: PartitionState, firstOffset: bigint): Promise<boolean> {
    const expected = st.expectedNext;
    if (expected === null || firstOffset <= expected) return true;
    const low = await this.p.logStart(st.topic, st.partition);
    if (expected >= low) return true;
    return this.apply(st, { topic: st.topic, partition: st.partition, from: expected, to: low - 1n });
  }

  private apply(st: PartitionState, loss: OffsetLoss): boolean {
    const lost = loss.to - loss.from + 1n;
    const what = `${loss.topic}/${loss.partition} offsets ${loss.from}..${loss.to} (${lost} records) were deleted by retention before pipeline ${this.o.pipeline} read them`;
    this.p.metrics.lostOffsets.inc({ pipeline: this.o.pipeline, topic: loss.topic, partition: String(loss.partition) }, Number(lost));
    this.p.countLost(Number(lost));
    this.p.log.error(
      {
        topic: loss.topic,
        partition: loss.partition,
        from: loss.from.toString(),
        to: loss.to.toString(),
        policy: this.o.onOffsetOutOfRange,
      },
      `OFFSET OUT OF RANGE: ${what}`,
    );
    if (this.o.onOffsetOutOfRange === 'fail') {
      // kafkajs already committed its reset to the earliest offset: the final commit puts the group back where it was.
      st.committed = null;
      this.p.lifecycle.fail(
        new AdjunctError(`${what}; onOffsetOutOfRange=fail`, {
          code: 'OFFSET_OUT_OF_RANGE',
          stage: 'consume',
          context: { topic: loss.topic, partition: loss.partition, from: loss.from.toString(), to: loss.to.toString() },
        }),
      );
      return false;
    }
    if (this.o.onOffsetOutOfRange === 'reload') this.p.reload();
    return true;
  }
}
