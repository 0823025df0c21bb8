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
}

/**
 * One record whose write is in flight: its partition, its place in the offset order and its share of the write budget.
 * It is the store's row listener and its own offset-tracker entry, so a write costs this one object, not a promise,
 * closures and a tracker entry per record.
 */
export class IssuedRecord implements RowListener, TrackedRecord {
  /** The writer's observed stream time right after the put decision (set when tracked). */
  observedStreamTime = 0;
  done = false;

  constructor(
    private readonly settlement: WriteSettlement,
    readonly st: PartitionState,
    readonly record: SinkRecord,
    readonly offset: number,
    /** Budget bytes held (key + value). */
    readonly size: number,
    /** The batch's heartbeat, for a dead letter's retries. */
    readonly heartbeat: Heartbeat,
  ) {}

  rowWritten(): void {
    this.settlement.durable(this);
  }

  rowFailed(error: unknown): void {
    this.settlement.failed(this, error);
  }
}
