import { AdjunctError, describeError } from '../errors';
import { isRetriableKafkaError } from '../kafka/kafka-retry';
import { topicPartitionKey } from '../kafka/topic-partition';
import { Logger } from '../observability/logger';
import { CONSUMER_RESET } from '../offsets';
import { PartitionState } from './partition-state';
import { PartitionWriterFactory } from './partition-writer';

/**
 * Where a newly assigned partition resumes: the group's committed offset, null when it has none, or CONSUMER_RESET
 * when kafkajs's reset replaced a position nobody knows.
 */
export type CommittedOffsetLookup = (topic: string, partition: number) => Promise<bigint | null | typeof CONSUMER_RESET>;

/** The partitions a task owns: opened on their first batch (once, even under concurrent batches), closed on revoke. */
export class PartitionRegistry {
  private readonly owned = new Map<string, PartitionState>();
  private readonly opening = new Map<string, Promise<PartitionState>>();
  /** The partitions of the latest assignment (null before the first): a state opened for one revoked meanwhile is fenced. */
  private assignment: Set<string> | null = null;

  constructor(
    private readonly writers: PartitionWriterFactory,
    private readonly committedOffset: CommittedOffsetLookup,
    private readonly log: Logger,
    /** Told about each revoked partition (its per-partition gauges are removed, so revoked partitions do not linger in lag sums). */
    private readonly revoked: (st: PartitionState) => void = () => undefined,
  ) {}

  /** The state of a partition, opening its writer on first use. */
  open(topic: string, partition: number): Promise<PartitionState> {
    const k = topicPartitionKey(topic, partition);
    const existing = this.owned.get(k);
    if (existing) return Promise.resolve(existing);
    let p = this.opening.get(k);
    if (!p) {
      p = (async () => {
        const [writer, committed] = await Promise.allSettled([
          this.writers.open(topic, partition),
          this.committedAtAssignment(topic, partition),
        ]);
        if (writer.status === 'rejected' || committed.status === 'rejected') {
          // The caller retries the whole open: a writer opened alongside a failed look-up is closed, never leaked.
          if (writer.status === 'fulfilled') await writer.value.close().catch(() => undefined);
          throw writer.status === 'rejected' ? writer.reason : (committed as PromiseRejectedResult).reason;
        }
        const reset = committed.value === CONSUMER_RESET;
        const st = new PartitionState(topic, partition, writer.value, reset ? null : (committed.value as bigint | null));
        st.resetAtAssignment = reset;
        if (this.assignment !== null && !this.assignment.has(k)) {
          // Revoked while it opened: nothing of it is written or committed.
          st.fenced = true;
          await writer.value.close().catch(() => undefined);
          return st;
        }
        this.owned.set(k, st);
        return st;
      })().finally(() => this.opening.delete(k));
      this.opening.set(k, p);
    }
    return p;
  }

  /**
   * The group's committed offset: the first batch is checked against it for lost offsets, so a failed look-up fails
   * the open (a Kafka outage: retriable, retried with backoff under the stall policy like a write) rather than letting
   * that batch through unchecked.
   */
  private async committedAtAssignment(topic: string, partition: number): Promise<bigint | null | typeof CONSUMER_RESET> {
    try {
      return await this.committedOffset(topic, partition);
    } catch (e) {
      if (e instanceof AdjunctError) throw e;
      throw new AdjunctError(`the committed offset of ${topic}/${partition} could not be read: ${describeError(e)}`, {
        code: 'KAFKA_UNAVAILABLE',
        stage: 'consume',
        retriable: isRetriableKafkaError(e),
        cause: e,
        context: { topic, partition },
      });
    }
  }

  /**
   * Keeps only the partitions of a new assignment; the others are fenced (nothing more of them is written) and their
   * writers closed. A kept partition that was fenced meanwhile (the group rebalanced under it) starts over: its next
   * batch opens a fresh state at the group's committed offset, where kafkajs fetches it from after a re-join.
   */
  retain(assignment: Record<string, number[]>): void {
    const keep = new Set<string>();
    for (const [t, ps] of Object.entries(assignment)) for (const p of ps) keep.add(topicPartitionKey(t, p));
    this.assignment = keep;
    for (const [k, st] of this.owned) {
      if (keep.has(k) && !st.fenced) continue;
      st.fenced = true;
      this.owned.delete(k);
      this.log.info(
        { topic: st.topic, partition: st.partition },
        keep.has(k) ? 'partition reopened after a rebalance' : 'partition revoked',
      );
      this.revoked(st);
      void st.writer.close().catch(() => undefined);
    }
  }

  /** The state of an owned partition, if open. */
  get(topic: string, partition: number): PartitionState | undefined {
    return this.owned.get(topicPartitionKey(topic, partition));
  }

  /** Every owned partition. */
  all(): PartitionState[] {
    return [...this.owned.values()];
  }

  /** True while some partition has writes in flight that are not deliberately left pending. */
  draining(): boolean {
    return this.all().some((p) => p.draining);
  }

  /** Closes every writer and forgets the partitions. */
  async closeAll(): Promise<void> {
    for (const p of this.owned.values()) {
      p.fenced = true;
      await p.writer.close().catch(() => undefined);
    }
    this.owned.clear();
  }
}
