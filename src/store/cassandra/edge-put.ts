import { AdjunctError, isRecordFailure } from '../../errors';
import { RowListener } from '../types';
import type { KeyState } from './edge-key-state';
import { PREPARED_IN_PLACE } from './fast-prepared-batch';
import { CoalescedWrite } from './write-batcher';

/** Whom a put tells that its rows are durable (or that one failed): the edge writer, which counts the key's writes in flight. */
export interface PutSettlement {
  rowsDone(state: KeyState, failed: boolean): void;
}

/** The bind values of a put not issued yet. */
const NO_PARAMS: unknown[] = [];

/**
 * A row the store refused for this record: later versions of its key may already be linked to it, so it cannot be
 * dead-lettered and skipped like a record of the rows layout. It stops the pipeline (an infrastructure failure), with
 * the store's own error as its cause. Failures of the infrastructure pass through as they are.
 */
function linkRefused(error: unknown, t: number): unknown {
  if (!isRecordFailure(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AdjunctError(`edge layout: the version at ${t} was refused (${message}); later versions of its key may link to it`, {
    code: 'VERSION_LINK_REFUSED',
    retriable: false,
    stage: 'write',
    cause: error,
  });
}

/** Hears a put's validTo once it is planned (the API's put returns it). */
export type Planned = (next: number | undefined) => void;

/**
 * One put: its version, whom to tell, and (once issued) its rows in flight; it settles when they are durable. Once
 * issued it is also its own value row (the write the batcher holds), so a put costs one object, not a put and a row.
 */
export class PutRows implements RowListener, CoalescedWrite {
  private left = 0;
  private error: unknown = undefined;
  // The value row, filled in when the put is issued.
  query = '';
  params: unknown[] = NO_PARAMS;
  routingKey: Buffer;
  rowId = 0;
  bytes = 0;
  listener: RowListener | undefined = undefined;
  // Filled by the worker's lean batch preparation: the put is its own batch entry.
  queryId: Buffer | undefined = undefined;
  meta: unknown = undefined;

  get [PREPARED_IN_PLACE](): true {
    return true;
  }

  constructor(
    private readonly writer: PutSettlement,
    readonly state: KeyState,
    /** keyHash(state.key): the Cassandra partition the batcher groups the row by. */
    readonly partitionHash: number,
    readonly t: number,
    readonly value: Buffer | null,
    private readonly upstream: RowListener,
    readonly planned: Planned | undefined,
  ) {
    this.routingKey = state.key;
  }

  /** Counts the rows about to be issued. */
  expect(rows: number): void {
    this.left = rows;
  }

  rowWritten(): void {
    this.settle();
  }

  rowFailed(error: unknown): void {
    if (this.error === undefined) this.error = error ?? new Error('row failed');
    this.settle();
  }

  /** The put failed before any row was issued (its read failed). */
  failUnissued(error: unknown): void {
    this.upstream.rowFailed(error);
  }

  abandoned(): boolean {
    return this.upstream.abandoned?.() ?? false;
  }

  revoked(): boolean {
    return this.upstream.revoked?.() ?? false;
  }

  private settle(): void {
    if (--this.left > 0) return;
    this.writer.rowsDone(this.state, this.error !== undefined);
    if (this.error === undefined) this.upstream.rowWritten();
    else this.upstream.rowFailed(linkRefused(this.error, this.t));
  }
}
