import { publicErrorText } from '../errors';
import { ErrorHandler } from './error-handler';
import { OffsetCommit, OffsetCommitter } from './offset-committer';
import { OffsetLossGuard } from './offset-loss-guard';
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

  constructor(
    readonly parts: PipelineParts,
    readonly target: TaskTarget,
    commitOffsets: (offsets: OffsetCommit) => Promise<void>,
  ) {
    const { options: o, stall, clock, metrics } = parts;
    const log = parts.logger.child({ pipeline: o.pipeline, generation: target.generation });
    this.lifecycle = new TaskLifecycle(stall, log, target.onFatal);
    this.partitions = new PartitionRegistry(target.writers, committedOffsetLookup(parts.admin, target.groupId), log);
    const shared = { lifecycle: this.lifecycle, stall, clock, metrics, log };
    const errors = new ErrorHandler(o, { ...shared, dlq: parts.dlq });
    const logStart = async (topic: string, partition: number) =>
      BigInt((await parts.admin.fetchTopicOffsets(topic)).find((p) => p.partition === partition)?.low ?? '0');
    const countLost = (n: number) => (this.counts.lostOffsets += n);
    const guard = new OffsetLossGuard(o, { ...shared, logStart, reload: target.reload, countLost });
    const { processor, budget } = parts;
    this.loop = new SinkLoop(o, { ...shared, partitions: this.partitions, processor, errors, guard, budget, counts: this.counts });
    this.committer = new OffsetCommitter(o.pipeline, this.partitions, commitOffsets, metrics);
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

/** The group's committed offset of a partition (next record to read), null when it has none. */
function committedOffsetLookup(admin: TaskAdmin, groupId: string) {
  return async (topic: string, partition: number): Promise<bigint | null> => {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const o = t?.partitions.find((p) => p.partition === partition)?.offset;
    // kafkajs commits -2 (earliest) itself when it resets an out-of-range position: that is no position of ours.
    return o === undefined || o === '' || BigInt(o) < 0n ? null : BigInt(o);
  };
}
