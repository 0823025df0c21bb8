import { types } from 'cassandra-driver';
import { RowListener } from '../types';
import { versionRowDataBytes } from './batch-data-size';
import { forgetIdle, KeyState, newState, sameBytes } from './edge-key-state';
import { Planned, PutRows, PutSettlement } from './edge-put';
import { EdgeSliceRead, EdgeTableReader } from './edge-table-reader';
import { int64Bytes } from './cql-types';
import { versionRowId } from './key-hash';
import { PREPARED_IN_PLACE } from './fast-prepared-batch';
import { CoalescedWrite } from './write-batcher';
import { EdgePlan, NO_PREV, planFromKnown, planFromRead, rememberPut } from './version-edges';

/** Default version times kept per key (a late version older than all of them costs a read). */
export const DEFAULT_EDGE_RING = 16;
/** Most keys seen first that one grouped read asks for (one request; its keys share a replica set). */
export const FIRST_READ_KEYS = 32;
/** Default most keys whose version times a writer keeps (least recently written forgotten first). */
export const DEFAULT_EDGE_KEYS = 20_000;
/** The marker cell of `writer`, encoded once. */
const MARKER_CELL = Buffer.alloc(0);
/**
 * A marker's `value`: unset, not null. Its row never held a value (only markers have the empty writer), so a null would
 * only add a cell tombstone to every marker; the INSERT's row liveness keeps the row, read back with value null.
 */
const MARKER_VALUE = types.unset;
/** A marker row's size as Cassandra counts it: the clustering (two bigints and the empty writer), no value cell. */
const MARKER_BYTES = versionRowDataBytes(undefined, null, MARKER_CELL, false) + 8;

/**
 * The write side of an edge-layout table for one writer: each put becomes its row under the key's version before it,
 * plus a marker under it for its successor when it is late. The key's newest version times are kept in memory
 * (bounded per key and in keys), so in-order puts and most late ones are planned without a read; a key not known (first
 * seen since start, forgotten, or after a late put older than what is kept) costs one read, after its own writes in flight.
 * Keys are found by their keyHash (the rare key whose hash another holds is kept aside, by its bytes); past maxKeys the
 * least recently written are forgotten (a clock: a key written since the last pass gets a second chance).
 */
export class EdgeWriter implements PutSettlement {
  private readonly keys = new Map<number | string, KeyState>();
  /** Keys whose keyHash another key holds, by their bytes as latin1. */
  private readonly collided = new Map<string, KeyState>();
  /** Keys not known whose first waiting put waits for the next grouped read (sent on a microtask). */
  private unknown: KeyState[] = [];
  /** Reads made to plan puts (grouped reads of keys seen first, slices of versions older than those kept). */
  reads = 0;

  constructor(
    private readonly reader: EdgeTableReader,
    private readonly writerCell: Buffer,
    private readonly maxKeys = DEFAULT_EDGE_KEYS,
    private readonly ring = DEFAULT_EDGE_RING,
  ) {}

  /** Keys whose version times are kept. */
  get size(): number {
    return this.keys.size + this.collided.size;
  }

  /** Plans and issues a put (now, or after a read and the key's writes in flight); `planned` hears its validTo. `hash` is keyHash(key). */
  send(key: Buffer, hash: number, t: number, value: Buffer | null, listener: RowListener, planned?: Planned): void {
    const state = this.stateOf(key, hash);
    const put = new PutRows(this, state, hash, t, value, listener, planned);
    if (state.waiting !== null) {
      state.waiting.push(put);
      return;
    }
    const plan = state.known ? planFromKnown(state, t) : undefined;
    if (plan !== undefined) {
      rememberPut(state, t, this.ring);
      this.issue(put, plan);
      return;
    }
    state.waiting = [put];
    if (state.pending === 0) this.readAndPlan(state);
  }

  /** The key's state, created (with a copy of its bytes) when the key is new. */
  private stateOf(key: Buffer, hash: number): KeyState {
    let state = this.findState(key, hash);
    if (state === undefined) {
      // Room is made before the new key goes in, so the key being written is never the one forgotten.
      const map: Map<number | string, KeyState> = this.keys.has(hash) ? this.collided : this.keys;
      if (map.size >= this.maxKeys) forgetIdle(map, this.maxKeys - 1);
      state = newState(key);
      map.set(map === this.keys ? hash : key.toString('latin1'), state);
    }
    state.used = true;
    return state;
  }

  /** The key's state if kept: by keyHash, else among the keys whose hash another key holds. */
  private findState(key: Buffer, hash: number): KeyState | undefined {
    const state = this.keys.get(hash);
    if (state !== undefined && sameBytes(state.key, key)) return state;
    return this.collided.size === 0 ? undefined : this.collided.get(key.toString('latin1'));
  }

  /**
   * Reads the key's versions around the first waiting put, plans it, then plans the others in order. A key not known
   * joins the next grouped read (the keys met first by one fetched batch share a few requests); a put older than the
   * times kept reads its own slice.
   */
  private readAndPlan(state: KeyState): void {
    state.reading = true;
    if (state.known) return this.readSlice(state);
    if (this.unknown.push(state) === 1) queueMicrotask(() => this.readUnknown());
  }

  /** One read of the slice `prev <= t` for the key's first waiting put. */
  private readSlice(state: KeyState): void {
    const put = state.waiting![0];
    this.reads++;
    // A stopped task's put stops its read's retries: nothing will commit it.
    this.reader
      .slice(state.key, put.t, () => put.abandoned())
      .then(
        (read) => this.planRead(state, put, read),
        (e: unknown) => this.readFailed(state, put, e),
      );
  }

  /** Reads the keys not known in groups of one replica set (at most FIRST_READ_KEYS each); a key they do not settle reads its slice. */
  private readUnknown(): void {
    const groups = new Map<string, KeyState[]>();
    for (const state of this.unknown) {
      const g = this.reader.groupOf(state.key);
      const members = groups.get(g);
      if (members === undefined) groups.set(g, [state]);
      else members.push(state);
    }
    this.unknown = [];
    for (const members of groups.values())
      for (let i = 0; i < members.length; i += FIRST_READ_KEYS) this.readGroup(members.slice(i, i + FIRST_READ_KEYS));
  }

  /** One grouped read for keys of one replica set; each key it settles is planned, the others read their slice. */
  private readGroup(states: KeyState[]): void {
    const puts = states.map((s) => s.waiting![0]);
    this.reads++;
    this.reader
      .firstSlices(
        puts.map((p, i) => ({ key: states[i].key, t: p.t })),
        () => puts.every((p) => p.abandoned()),
      )
      .then(
        (reads) => {
          for (let i = 0; i < states.length; i++) {
            const read = reads[i];
            if (read === undefined) this.readSlice(states[i]);
            else this.planRead(states[i], puts[i], read);
          }
        },
        (e: unknown) => {
          for (let i = 0; i < states.length; i++) this.readFailed(states[i], puts[i], e);
        },
      );
  }

  /** Plans the first waiting put from what its read found, then the puts waiting behind it. */
  private planRead(state: KeyState, put: PutRows, { answer, first }: EdgeSliceRead): void {
    state.reading = false;
    const { plan, known } = planFromRead(answer, first, put.t);
    state.known = known !== undefined;
    state.times = known?.times ?? [];
    state.complete = known?.complete ?? false;
    // A put leaves the queue before it is issued: a row failed at once must not find it waiting still.
    state.waiting!.shift();
    this.issue(put, plan);
    this.resume(state);
  }

  /** The read failed (after the executor's retries): its put fails as its write would, and so do the waiting puts of a stopped task. */
  private readFailed(state: KeyState, put: PutRows, e: unknown): void {
    state.reading = false;
    state.waiting!.shift();
    // No read is started for a stopped task's waiting puts: they fail with it.
    put.failUnissued(e);
    const waiting = state.waiting!;
    for (let i = 0; i < waiting.length;) {
      if (waiting[i].abandoned()) waiting.splice(i, 1)[0].failUnissued(e);
      else i++;
    }
    this.resume(state);
  }

  /** Plans the waiting puts in order while the key's times are known; the first that needs a read waits for it. */
  private resume(state: KeyState): void {
    const waiting = state.waiting!;
    while (waiting.length > 0) {
      const put = waiting[0];
      const plan = state.known ? planFromKnown(state, put.t) : undefined;
      if (plan === undefined) break;
      waiting.shift();
      rememberPut(state, put.t, this.ring);
      this.issue(put, plan);
    }
    if (waiting.length === 0) state.waiting = null;
    else this.readWhenIdle(state);
  }

  /** Starts the read the first waiting put needs once the key has no writes in flight and no read running. */
  private readWhenIdle(state: KeyState): void {
    if (state.pending === 0 && !state.reading && state.waiting !== null && state.waiting.length > 0) this.readAndPlan(state);
  }

  /** Sends a put's rows (its value row; a marker when late), counted in flight until durable. */
  private issue(put: PutRows, plan: EdgePlan): void {
    put.planned?.(plan.next);
    const { state, partitionHash: hash, t } = put;
    state.pending++;
    put.expect(plan.marker ? 2 : 1);
    // Times go as numbers where the batch body writes them in place; a Buffer cell is not kept past the put (a cell
    // from Node's buffer pool would keep its whole 8 KiB slab alive).
    const exec = this.reader.exec;
    const prevCell = exec.rowInt64(plan.prev);
    const fromCell = exec.rowInt64(t);
    put.query = this.reader.edges.insert;
    put.params = [state.key, prevCell, fromCell, put.value, this.writerCell];
    put.rowId = versionRowId(hash, t);
    put.bytes = this.valueRowBytes(put.value);
    exec.issueRow(put, 'write version', put);
    if (plan.marker) exec.issueRow(this.markerRow(state.key, hash, fromCell, plan.next!), 'write version', put);
  }

  /** The marker row `(from, next)` of a late put: the empty writer, value unset. */
  private markerRow(key: Buffer, hash: number, from: number | Buffer, next: number): CoalescedWrite {
    return {
      query: this.reader.edges.insert,
      params: [key, from, this.reader.exec.rowInt64(next), MARKER_VALUE, MARKER_CELL],
      routingKey: key,
      partitionHash: hash,
      rowId: ~versionRowId(hash, next),
      bytes: MARKER_BYTES,
      listener: undefined,
      [PREPARED_IN_PLACE]: true,
      queryId: undefined,
      meta: undefined,
    };
  }

  /** A value row's size as Cassandra counts it: the clustering (two bigints and the writer) and the value cell. */
  private valueRowBytes(value: Buffer | null): number {
    return versionRowDataBytes(undefined, value, this.writerCell, false) + 8;
  }

  /**
   * A put's rows are durable, or one failed: then the key's kept times (which count the put) are dropped, so its next
   * put reads. A read waiting for the key's writes in flight starts on a later tick, never inside the put's own issue.
   */
  rowsDone(state: KeyState, failed: boolean): void {
    if (failed) {
      state.known = false;
      state.times = [];
      state.complete = false;
    }
    if (--state.pending === 0 && state.waiting !== null) queueMicrotask(() => this.readWhenIdle(state));
  }
}

/**
 * Removes a key's rows that no read at or after `horizon` needs: one paged read of the rows with prev <= horizon, then
 * (when some lie below what must stay) one range delete `prev < L`, where L is the lowest prev of a value row of any
 * version from the one valid at the horizon on. Rows of expired versions above L stay until a later clean-up.
 */
export async function cleanEdgesBelow(reader: EdgeTableReader, key: Buffer, horizon: number): Promise<void> {
  const rows = await reader.rowsUpTo(key, horizon);
  let floor = NO_PREV;
  for (const r of rows) if (r.from <= horizon && r.from > floor) floor = r.from;
  if (floor === NO_PREV) return;
  let lowest = Number.POSITIVE_INFINITY;
  let lowestPrev = Number.POSITIVE_INFINITY;
  const seen = new Set<number>();
  for (const r of rows) {
    if (r.prev < lowestPrev) lowestPrev = r.prev;
    if (r.marker || r.from < floor || seen.has(r.from)) continue;
    seen.add(r.from);
    if (r.prev < lowest) lowest = r.prev;
  }
  if (!(lowest > lowestPrev) || lowest === NO_PREV) return;
  await reader.exec.write(reader.edges.deleteBelow, [key, int64Bytes(lowest)], 'delete expired versions');
}
