import { KafkaMessage } from 'kafkajs';
import { Clock } from '../clock';
import { isRejoinError } from '../kafka/kafka-retry';
import { Logger } from '../observability/logger';
import { Heartbeat } from './error-handler';
import type { PartitionState } from './partition-state';
import { TaskLifecycle } from './task-lifecycle';

/** One fetched batch as the loop sees it (kafkajs's EachBatchPayload fits). */
export interface FetchedBatch {
  batch: {
    topic: string;
    partition: number;
    highWatermark: string;
    messages: KafkaMessage[];
    /**
     * First and last offset kafkajs fetched, also of records it does not hand over (transaction markers, aborted
     * records); when absent, those of `messages`.
     */
    firstOffset?(): string | null;
    lastOffset?(): string;
  };
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
  isRunning(): boolean;
  isStale(): boolean;
}

/** Per batch: heartbeat throttled to the heartbeat interval, heartbeat now, and whether to go on. */
export interface BatchControl {
  heartbeat: Heartbeat;
  beat: Heartbeat;
  /** True when a heartbeat is due (checked synchronously per record). */
  heartbeatDue(): boolean;
  /** Notes a record handed over (settled or issued): the position to resolve next. */
  handedOver(offset: string): void;
  /** Resolves the consumer position up to the last record handed over (kafkajs `resolveOffset`), once. */
  resolve(): void;
  /** Whether to go on: the task accepts records and the consumer neither stopped nor seeked this partition. */
  keepGoing(): boolean;
  /** Notes an await point: other code ran, so the consumer may have stopped or seeked since the last check. */
  yielded(): void;
}

/** What the control of a batch needs from its task. */
export interface BatchControlParts {
  clock: Clock;
  heartbeatIntervalMs: number;
  lifecycle: TaskLifecycle;
  log: Logger;
}

/**
 * The control of one fetched batch of partition `st`: heartbeats (a rejoin error fences the partition), the consumer
 * position to resolve, and whether to go on.
 */
export function batchControl(b: FetchedBatch, st: PartitionState, p: BatchControlParts): BatchControl {
  const clock = p.clock;
  const interval = p.heartbeatIntervalMs;
  let last = clock.now();
  let handed: string | null = null;
  const heartbeatDue = () => clock.now() - last >= interval;
  // A heartbeat that finds the group rebalancing (or this member unknown) fences the partition: it may have a new
  // owner by the time this worker's waits and retries end, so none of it is written after that.
  const fenceOnRejoin = (e: unknown): never => {
    if (isRejoinError(e) && !st.fenced) {
      st.fenced = true;
      st.fencedBy = e;
      p.log.info({ topic: st.topic, partition: st.partition }, 'group rebalancing: partition fenced until re-assigned');
    }
    throw e;
  };
  const beat = async () => {
    last = clock.now();
    await b.heartbeat().catch(fenceOnRejoin);
  };
  const heartbeat = async () => {
    if (heartbeatDue()) await beat();
  };
  // kafkajs's isRunning()/isStale() (a JSON key per call) change only when other code runs (consumer.stop, seek), i.e.
  // while this loop awaits: they are checked at the start and after each await point, not per record.
  let consumerChecked = false;
  const resolve = () => {
    if (handed === null) return;
    b.resolveOffset(handed);
    handed = null;
  };
  return {
    heartbeat,
    beat,
    heartbeatDue,
    handedOver: (offset) => {
      handed = offset;
    },
    resolve,
    keepGoing: () => {
      if (!p.lifecycle.accepting || st.fenced) return false;
      if (consumerChecked) return true;
      if (!b.isRunning() || b.isStale()) return false;
      consumerChecked = true;
      return true;
    },
    yielded: () => {
      consumerChecked = false;
    },
  };
}
