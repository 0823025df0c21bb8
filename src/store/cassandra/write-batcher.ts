import { PREPARED_IN_PLACE } from './fast-prepared-batch';
import { AdjunctError } from '../../errors';
import type { RowListener } from '../types';
import { StagedRows } from './staged-rows';

/** One row write handed to the batcher: a prepared statement, its bind values and where the row lives. */
export interface CoalescedWrite {
  query: string;
  params: unknown[];
  /** Serialized Cassandra partition key (the driver's routing key). */
  routingKey: Buffer;
  /** keyHash(routingKey), from the writer that already has it: the batcher groups a partition's rows by it. */
  partitionHash: number;
  /**
   * A hash of the row's identity (partition + clustering key): a later write of the same row never shares a batch with
   * an earlier one (they would get the same timestamp). Equal rows must hash equal; a collision only cuts a batch early.
   */
  rowId: number;
  /** Estimated mutation size in bytes (key + value + clustering columns). */
  bytes: number;
  /** Whom the batcher tells when the request carrying the row settles: it sets this when the row is added. */
  listener?: RowListener;
  /**
   * Set on a row that may be its own prepared batch entry (fast-prepared-batch: no entry object per row); such a row
   * declares `queryId` and `meta`, which the worker's lean batch preparation fills in.
   */
  readonly [PREPARED_IN_PLACE]?: true;
  queryId?: Buffer;
  meta?: unknown;
}

/** A row the batcher holds: a write with its listener (the row object itself, not a wrapper per row). */
type HeldRow = CoalescedWrite & { listener: RowListener };

/** Sends what the batcher built: one statement, or an UNLOGGED batch, with a fixed client timestamp; retries inside. */
export interface BatchSender {
  /** Sends one request (a single statement when writes has one entry); resolves when Cassandra acknowledged it. */
  send(writes: readonly CoalescedWrite[], timestamp: number, abandoned?: () => boolean): Promise<unknown>;
  /** The batch's group: the replica set of a routing key (token-aware), or the partition key when no token map is known. */
  groupOf(routingKey: Buffer): string;
  /** A strictly increasing client write timestamp (µs), fixed per batch so whole-batch retries cannot reorder rows. */
  nextTimestamp(): number;
  /** True when the groups routing keys map to may have changed since the last call (a node joined or left, the token map loaded). */
  topologyChanged?(): boolean;
}

/** Bounds of a batch and the linger of an open one. */
export interface WriteBatcherOptions {
  /** Most estimated bytes per batch (stay under Cassandra's batch_size_warn_threshold, 5 KiB by default). */
  maxBytes: number;
  /** Most rows per batch. */
  maxRows: number;
  /** How long an open batch waits for more rows (ms); 0 sends every write on its own. */
  lingerMs: number;
  /** Most batches in flight at once (the rest wait in order). */
  maxConcurrent: number;
  /** Told the duration of every request (a batch or a single row, retries and splits included), in seconds. */
  onRequestDone?: (seconds: number) => void;
}

interface SealedBatch {
  rows: HeldRow[];
  timestamp: number;
}

/**
 * Coalesces row writes issued concurrently into UNLOGGED batches of one replica set (so a batch never fans out from
 * its coordinator; on one node everything shares a group), bounded by bytes and rows, with a short linger. Rows wait
 * staged until a request slot is free; a batch is cut from them then, taking the rows of one Cassandra partition
 * together (StagedRows), so the queue that forms while Cassandra is busy becomes fewer, cheaper mutations.
 * Each write's promise settles only when its batch is acknowledged. A batch's client timestamp is fixed when it is
 * cut, and a later write of a row is never cut before an earlier one, so retries and splits cannot reorder a row's
 * writes. A batch that fails with a non-retriable error (or a dropped table) is split in halves until the failing row
 * stands alone: one poison row never fails its neighbours.
 */
export class WriteBatcher {
  /** Staged rows per replica group, in the order groups are served (round-robin). */
  private readonly staging = new Map<string, StagedRows<HeldRow>>();
  /** Single-row requests of a batcher with linger 0 (nothing is staged then), in issue order, timestamps fixed at issue. */
  private readonly ready: SealedBatch[] = [];
  private inFlight = 0;
  /** Requests sent (batches and single statements, splits included). */
  requests = 0;

  constructor(
    private readonly sender: BatchSender,
    private readonly options: WriteBatcherOptions,
  ) {}

  /** True when rows are coalesced into batches (a linger above 0), false when each goes alone. */
  get coalesces(): boolean {
    return this.options.lingerMs > 0;
  }

  /** Adds a row write; resolves when the request carrying it is acknowledged. */
  write(w: CoalescedWrite): Promise<void> {
    return new Promise<void>((resolve, reject) => this.add(w, { rowWritten: resolve, rowFailed: reject }));
  }

  /** Adds a row write; the listener hears when the request carrying it is acknowledged (the sink's path: no promise). */
  add(w: CoalescedWrite, listener: RowListener): void {
    // A row object already held (added twice) is copied, so each addition keeps its own listener.
    const p = (w.listener === undefined ? w : { ...w }) as HeldRow;
    p.listener = listener;
    if (this.options.lingerMs <= 0) {
      this.ready.push({ rows: [p], timestamp: this.sender.nextTimestamp() });
      this.pump();
      return;
    }
    // A row's later write must not be cut before its earlier one: when a row's group may change (the ring changed), the
    // rows staged so far are sealed first, so they get the earlier timestamps.
    if (this.sender.topologyChanged?.() === true) this.sealStaged();
    const group = this.sender.groupOf(w.routingKey);
    let st = this.staging.get(group);
    if (st === undefined) {
      const fresh = new StagedRows<HeldRow>(group);
      fresh.timer = setTimeout(() => {
        fresh.timer = undefined;
        fresh.lingered = true;
        this.pump();
      }, this.options.lingerMs);
      this.staging.set(group, fresh);
      st = fresh;
    }
    st.add(p);
    if (st.lingered || st.fillsBatch(this.options)) this.pump();
  }

  /** Cuts every staged row into batches now, in staging order, each with its timestamp; they are sent before any row staged later. */
  private sealStaged(): void {
    if (this.staging.size === 0) return;
    for (const st of this.staging.values()) {
      st.lingered = true;
      while (st.rows > 0) this.ready.push({ rows: st.cut(this.options), timestamp: this.sender.nextTimestamp() });
      if (st.timer !== undefined) clearTimeout(st.timer);
    }
    this.staging.clear();
    this.pump();
  }

  /** Sends every staged row as soon as slots allow, without waiting for the linger (shutdown, tests). */
  flush(): void {
    for (const st of this.staging.values()) st.lingered = true;
    this.pump();
  }

  /** Rows staged or waiting for a slot, not yet sent. */
  get queued(): number {
    let n = this.ready.length;
    for (const st of this.staging.values()) n += st.rows;
    return n;
  }

  private pump(): void {
    while (this.inFlight < this.options.maxConcurrent) {
      const b = this.nextBatch();
      if (b === undefined) return;
      // Rows of a revoked partition are not sent: sent now, with a timestamp later than the new owner's writes of the
      // same rows, they could replace newer versions.
      b.rows = withoutRevoked(b.rows);
      if (b.rows.length === 0) continue;
      this.inFlight++;
      const started = performance.now();
      void this.deliver(b.rows, b.timestamp).finally(() => {
        this.inFlight--;
        this.options.onRequestDone?.((performance.now() - started) / 1000);
        this.pump();
      });
    }
  }

  /** The next request to send: a waiting single row, else a batch cut from a group that fills one or has lingered. */
  private nextBatch(): SealedBatch | undefined {
    const single = this.ready.shift();
    if (single !== undefined) return single;
    for (const st of this.staging.values()) {
      if (!st.lingered && !st.fillsBatch(this.options)) continue;
      const rows = st.cut(this.options);
      this.staging.delete(st.group);
      if (st.rows > 0) this.staging.set(st.group, st);
      else if (st.timer !== undefined) clearTimeout(st.timer);
      return { rows, timestamp: this.sender.nextTimestamp() };
    }
    return undefined;
  }

  /** Sends rows as one request; on a row-specific failure splits them in halves to isolate the bad row. */
  private async deliver(rows: HeldRow[], timestamp: number): Promise<void> {
    try {
      this.requests++;
      await this.sender.send(rows, timestamp, () => allAbandoned(rows));
    } catch (e) {
      if (rows.length > 1 && isRowSpecific(e)) {
        const half = rows.length >> 1;
        await Promise.all([this.deliver(rows.slice(0, half), timestamp), this.deliver(rows.slice(half), timestamp)]);
        return;
      }
      for (const r of rows) r.listener.rowFailed(e);
      return;
    }
    for (const r of rows) r.listener.rowWritten();
  }
}

/**
 * A failure that one row can cause (invalid request, too large, serialisation): worth splitting the batch for.
 * Outages (retriable errors, exhausted retries) fail every row of the batch alike.
 */
function isRowSpecific(e: unknown): boolean {
  // A dropped table fails every row of a batch that mixes it with live tables: split, so only its own rows wait.
  if (e instanceof AdjunctError) return (!e.retriable && e.code !== 'RETRIES_EXHAUSTED') || e.code === 'TABLE_MISSING';
  return true;
}

/** The rows still to be written; each revoked one is failed (unsent) at once. */
function withoutRevoked(rows: HeldRow[]): HeldRow[] {
  let revoked = 0;
  for (const r of rows) if (r.listener.revoked?.() === true) revoked++;
  if (revoked === 0) return rows;
  const kept: HeldRow[] = [];
  for (const r of rows) {
    if (r.listener.revoked?.() !== true) kept.push(r);
    else
      r.listener.rowFailed(new AdjunctError('write not sent: its partition was revoked', { code: 'RETRIES_EXHAUSTED', retriable: false }));
  }
  return kept;
}

/** True when every row's listener has given up waiting (a stopped task's writes): their retries may end. */
function allAbandoned(rows: readonly HeldRow[]): boolean {
  for (const r of rows) if (r.listener.abandoned?.() !== true) return false;
  return true;
}
