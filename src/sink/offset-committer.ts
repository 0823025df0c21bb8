import { AdjunctMetrics } from '../observability/metrics';
import { PartitionRegistry } from './partition-registry';
import { PartitionState } from './partition-state';

/** Offsets to commit, in kafkajs's shape. */
export type OffsetCommit = { topic: string; partition: number; offset: string }[];

/**
 * Commits, per owned partition, the offset after the last durable record, persisting the writer's observed stream
 * time as of that offset first; a partition whose position kafkajs reset gets its position before the gap back.
 * Commits are chained; a failed one does not poison the next.
 */
export class OffsetCommitter {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly pipeline: string,
    private readonly partitions: PartitionRegistry,
    private readonly commitOffsets: (offsets: OffsetCommit) => Promise<void>,
    private readonly metrics: AdjunctMetrics,
  ) {}

  /** Commits every durable offset not committed yet (after the commit in progress). */
  commit(): Promise<void> {
    const next = this.chain.catch(() => undefined).then(() => this.commitDurable());
    this.chain = next;
    return next;
  }

  private async commitDurable(): Promise<void> {
    const offsets: OffsetCommit = [];
    const done: [PartitionState, bigint][] = [];
    for (const st of this.partitions.all()) {
      const at = st.commitPosition();
      if (!at) continue;
      if (at.observedStreamTime !== undefined) await st.writer.flush(at.observedStreamTime);
      offsets.push({ topic: st.topic, partition: st.partition, offset: at.offset.toString() });
      done.push([st, at.offset]);
    }
    if (!offsets.length) return;
    await this.commitOffsets(offsets);
    for (const [st, offset] of done) {
      st.committed = offset;
      st.restorePosition = false;
      const labels = { pipeline: this.pipeline, topic: st.topic, partition: String(st.partition) };
      this.metrics.committed.set(labels, Number(offset));
      const lag = st.lag();
      if (lag !== null) this.metrics.lag.set(labels, lag);
    }
  }
}
