import type { IHeaders, KafkaMessage } from 'kafkajs';
import type { RowListener } from '../store/types';
import type { Heartbeat } from './error-handler';
import type { TrackedRecord } from './offset-tracker';
import type { PartitionState } from './partition-state';
import type { SinkRecord } from './sink-record';

/** What the loop does when the write of an issued record settles. */
export interface WriteSettlement {
  /** The record's row is durable. */
  durable(r: IssuedRecord): void;
  /** The record's write failed for good: tolerance decides. */
  failed(r: IssuedRecord, error: unknown): void;
  /** True once the task that issued the record has stopped or failed: nothing will commit it. */
  abandoned(r: IssuedRecord): boolean;
}

/**
 * One consumed record as the loop handles it: its coordinates and original bytes (the SinkRecord a dead letter
 * carries), its place in the partition's offset order (its own offset-tracker entry), its share of the write budget,
 * and the store's row listener for its write. A record costs this one object, not a promise, closures and separate
 * record and tracker objects.
 */
export class IssuedRecord implements SinkRecord, RowListener, TrackedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly timestamp: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: IHeaders;
  /** The writer's observed stream time right after the put decision (set when tracked). */
  observedStreamTime = 0;
  done = false;
  /** Budget bytes held (key + value) once delivered. */
  size = 0;

  constructor(
    private readonly settlement: WriteSettlement,
    readonly st: PartitionState,
    m: KafkaMessage,
    /** The batch's heartbeat, for a dead letter's retries. */
    readonly heartbeat: Heartbeat,
  ) {
    this.topic = st.topic;
    this.partition = st.partition;
    this.offset = m.offset;
    this.timestamp = m.timestamp;
    this.key = m.key ?? null;
    this.value = m.value ?? null;
    this.headers = m.headers;
  }

  rowWritten(): void {
    this.settlement.durable(this);
  }

  rowFailed(error: unknown): void {
    this.settlement.failed(this, error);
  }

  abandoned(): boolean {
    return this.settlement.abandoned(this);
  }

  revoked(): boolean {
    return this.st.fenced;
  }
}
