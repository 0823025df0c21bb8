import { withKafkaTimeout } from '../kafka/kafka-retry';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { PartitionRegistry } from './partition-registry';
import { PartitionState } from './partition-state';

/** Offsets to commit, in kafkajs's shape. */
export type OffsetCommit = { topic: string; partition: number; offset: string }[];

/**
 * Commits, per owned partition, the offset after the last durable record, persisting the writer's observed stream
 * time as of that offset first; a partition whose position kafkajs reset gets its position before the gap back.
 * Commits are chained; a failed one does not poison the next, and one that does not finish within `timeoutMs` is
 * given up (Kafka Connect's offset.flush.timeout.ms): the next commit sends the offsets again, so a request that never
 * settles (a broker killed under it) cannot hold every later commit. A given-up commit that lands late (possibly
 * over a later one) makes the next commit send the current position again.
 */
export class OffsetCommitter {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly pipeline: string,
    private readonly partitions: PartitionRegistry,
    private readonly commitOffsets: (offsets: OffsetCommit) => Promise<void>,
    private readonly metrics: AdjunctMetrics,
    /** Longest wait for one commit (flush and offset commit) before it is given up; 0: no bound. */
    private readonly timeoutMs = 0,
    private readonly log?: Logger,
  ) {}

  /** Commits every durable offset not committed yet (after the commit in progress, or once it was given up). */
  commit(): Promise<void> {
    const next = this.chain
      .catch(() => undefined)
      .then(() => {
        const attempt = { givenUp: false };
        return withKafkaTimeout(
          'the offset commit (given up: the next commit sends the offsets again)',
          this.commitDurable(attempt),
          this.timeoutMs,
          {
            stage: 'commit',
            onExpired: () => (attempt.givenUp = true),
          },
        );
      });
    this.chain = next;
    return next;
  }

  private async commitDurable(attempt: { givenUp: boolean }): Promise<void> {
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
    const started = Date.now();
    await this.commitOffsets(offsets);
    if (attempt.givenUp)
      this.log?.warn(
        { partitions: offsets.length, afterMs: Date.now() - started },
        'a given-up offset commit landed late: the next commit sends the current positions again',
      );
    for (const [st, offset] of done) {
      if (attempt.givenUp) {
        // Sent after it was given up, maybe over a later commit: the next commit sends the current position again.
        st.resend = true;
        continue;
      }
      st.committed = offset;
      st.restorePosition = false;
      st.resend = false;
      const labels = { pipeline: this.pipeline, topic: st.topic, partition: String(st.partition) };
      this.metrics.committed.set(labels, Number(offset));
      const lag = st.lag();
      if (lag !== null) this.metrics.lag.set(labels, lag);
    }
  }
}
