import { describeError, publicErrorText } from '../errors';
import { withKafkaTimeout } from '../kafka/kafka-retry';
import { ErrorHandler } from './error-handler';
import { OffsetCommit, OffsetCommitter } from './offset-committer';
import { GroupPositions } from '../offsets';
import { OffsetLossGuard, PartitionLogLookup } from './offset-loss-guard';
import { PartitionRegistry } from './partition-registry';
import { PipelineParts, TaskAdmin, TaskTarget } from './pipeline-parts';
import { SinkLoop } from './sink-loop';
import { TaskLifecycle } from './task-lifecycle';
import { PipelineStatus, TaskCounts } from './task-status';

/**
 * A sink task without its Kafka consumer: lifecycle, owned partitions, the batch loop, error handling, the
 * offset-loss guard and the committer, wired once. The consumer side (PipelineTask) feeds it batches and commits.
 */
export class SinkTaskCore {
  readonly counts: TaskCounts = { consumed: 0, written: 0, skipped: 0, deadLettered: 0, expired: 0, lostOffsets: 0 };
  readonly lifecycle: TaskLifecycle;
  readonly partitions: PartitionRegistry;
  readonly loop: SinkLoop;
  readonly committer: OffsetCommitter;
  /** The group's committed positions (taken at start, before kafkajs can reset them). */
  readonly positions: GroupPositions;
  private readonly guard: OffsetLossGuard;

  constructor(
    readonly parts: PipelineParts,
    readonly target: TaskTarget,
    commitOffsets: (offsets: OffsetCommit) => Promise<void>,
  ) {
    const { options: o, stall, clock, metrics } = parts;
    const log = parts.logger.child({ pipeline: o.pipeline, generation: target.generation });
    this.lifecycle = new TaskLifecycle(stall, log, target.onFatal);
    this.positions = new GroupPositions(parts.admin, target.groupId, target.startAt);
    // Kafka look-ups on the batch path are bounded: one that never answers fails the batch (kafkajs fetches it again).
    const bound = <T>(what: string, call: Promise<T>) => withKafkaTimeout(what, call, o.commitTimeoutMs);
    const committed = (topic: string, partition: number) =>
      bound(`the committed offset of ${topic}/${partition}`, this.positions.committed(topic, partition));
    const forgetGauges = (st: { topic: string; partition: number }) => {
      const labels = { pipeline: o.pipeline, topic: st.topic, partition: String(st.partition) };
      metrics.committed.remove(labels);
      metrics.lag.remove(labels);
    };
    this.partitions = new PartitionRegistry(target.writers, committed, log, forgetGauges);
    const shared = { lifecycle: this.lifecycle, stall, clock, metrics, log };
    const errors = new ErrorHandler(o, { ...shared, dlq: parts.dlq });
    const countLost = (n: number) => (this.counts.lostOffsets += n);
    const restorePositions = () => this.committer.commit();
    const lookup = partitionLogLookup(parts.admin);
    const partitionLog: PartitionLogLookup = (topic, partition) =>
      bound(`the log offsets of ${topic}/${partition}`, lookup(topic, partition));
    this.guard = new OffsetLossGuard(o, { ...shared, partitionLog, reload: target.reload, countLost, restorePositions });
    const { processor, budget } = parts;
    const { partitions, guard, counts } = this;
    this.loop = new SinkLoop(o, { ...shared, partitions, processor, errors, guard, budget, counts });
    this.committer = new OffsetCommitter(o.pipeline, this.partitions, commitOffsets, metrics, o.commitTimeoutMs, log);
  }

  /**
   * Takes the group's positions before the consumer runs; a partition kafkajs reset (-2) with no known position before
   * it goes to the offset-loss policy now (a task restarted after a failure or a kill, where nobody judged the gap).
   * False when the policy failed the task.
   */
  async takePositions(): Promise<boolean> {
    const reset = await this.positions.snapshot(this.target.topics);
    for (const { topic, partition } of reset) {
      const log = this.parts.logger;
      const go = await this.guard.resetBeforeStart(topic, partition).catch((e: unknown) => {
        log.warn({ topic, partition, err: describeError(e) }, 'judging a reset group position failed: the first batch is not checked');
        return true;
      });
      if (!go) return false;
    }
    return true;
  }

  /**
   * Records were deleted past an opened partition's position and no batch came to show it (the progress watchdog saw
   * the log start beyond it): the offset-loss policy decides as for a batch that jumps.
   */
  async behindLogStart(topic: string, partition: number, logStart: bigint): Promise<void> {
    const st = this.partitions.get(topic, partition);
    if (st === undefined || !this.lifecycle.accepting) return;
    await this.guard.behindLogStart(st, logStart);
  }

  /** Status snapshot for /status and the CLI. */
  status(): PipelineStatus {
    return {
      name: this.parts.options.pipeline,
      state: this.lifecycle.state,
      lastError: this.lifecycle.lastError === undefined ? undefined : publicErrorText(this.lifecycle.lastError),
      stalledBy: this.parts.stall.publicCause,
      counts: { ...this.counts },
      partitions: this.partitions.all().map((p) => p.status()),
    };
  }
}

/** A partition's log start and end offsets. */
function partitionLogLookup(admin: TaskAdmin): PartitionLogLookup {
  return async (topic, partition) => {
    const p = (await admin.fetchTopicOffsets(topic)).find((x) => x.partition === partition);
    return p ? { logStart: BigInt(p.low), highWatermark: BigInt(p.high) } : null;
  };
}
