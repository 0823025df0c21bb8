import type { CoalescedWrite } from './write-batcher';

/** What staging reads of a row: its partition, its identity and its size. */
export type StagedRow = Pick<CoalescedWrite, 'partitionHash' | 'rowId' | 'bytes'>;

/** Bounds of one batch cut from staged rows. */
export interface CutBounds {
  maxBytes: number;
  maxRows: number;
}

/** Room for a row's index beside its partition hash in one float64 sort key (2^22 rows per chunk). */
const INDEX_BITS = 22;
const INDEX_SPAN = 2 ** INDEX_BITS;

/**
 * Rows of one replica group waiting for a request slot. When a slot frees and no grouped batch is left, the rows
 * staged so far (a chunk) are sorted by Cassandra partition (`partitionHash`; issue order within one) and cut
 * into batches, so the rows of one partition travel together: Cassandra applies them as one mutation, which costs it
 * far less than one mutation per row. Grouping never holds a row back: rows wait only while every slot is busy (the
 * queue that forms is what gets grouped), or for the linger of a partial batch.
 *
 * Order: a chunk's batches all leave before any later row, so no row waits behind more than one chunk. A later write
 * of a row never shares a batch with an earlier one, and lands in a later batch (which gets a later timestamp). A hash
 * collision only puts two partitions' rows next to each other.
 */
export class StagedRows<R extends StagedRow> {
  /** Rows not grouped yet, in issue order. */
  private staged: R[] = [];
  private stagedBytes = 0;
  /** Batches of the last grouped chunk, in send order, from `nextBatch` on. */
  private grouped: (R[] | undefined)[] = [];
  private nextBatch = 0;
  /** Rows staged or grouped, not taken yet. */
  rows = 0;
  /** True once the oldest staged row has waited the linger (or a flush asked): a partial batch may leave now. */
  lingered = false;
  /** The linger timer, started by the batcher with the first row of this staging (cleared when it empties). */
  timer?: NodeJS.Timeout;

  constructor(readonly group: string) {}

  /** Stages a row (issue order). */
  add(r: R): void {
    this.staged.push(r);
    this.stagedBytes += r.bytes;
    this.rows++;
  }

  /** True when a grouped batch is waiting, or the staged rows fill at least one batch. */
  fillsBatch(b: CutBounds): boolean {
    return this.nextBatch < this.grouped.length || this.staged.length >= b.maxRows || this.stagedBytes >= b.maxBytes;
  }

  /**
   * Takes the next batch: the next one of the grouped chunk, or else groups the staged rows first (a trailing partial
   * batch stays staged unless lingered). Never empty when rows are staged and fillsBatch or lingered holds.
   */
  cut(b: CutBounds): R[] {
    if (this.nextBatch >= this.grouped.length) this.groupStaged(b);
    const batch = this.grouped[this.nextBatch]!;
    // Released at once: a sent batch's rows must not live on until the whole chunk is sent.
    this.grouped[this.nextBatch++] = undefined;
    if (this.nextBatch >= this.grouped.length) {
      this.grouped = [];
      this.nextBatch = 0;
    }
    this.rows -= batch.length;
    return batch;
  }

  /** Sorts the staged rows by partition hash (stable) and cuts them into batches within the bounds. */
  private groupStaged(b: CutBounds): void {
    const rows = this.staged;
    const n = Math.min(rows.length, INDEX_SPAN);
    const order = new Float64Array(n);
    for (let i = 0; i < n; i++) order[i] = (rows[i].partitionHash >>> 2) * INDEX_SPAN + i;
    order.sort();
    const out: (R[] | undefined)[] = [];
    let batch: R[] = [];
    let bytes = 0;
    let prevHash = -1;
    let runFrom = 0;
    for (let k = 0; k < n; k++) {
      const key = order[k];
      const hash = Math.floor(key / INDEX_SPAN);
      const w = rows[key - hash * INDEX_SPAN];
      if (hash !== prevHash) runFrom = batch.length;
      const repeat = hash === prevHash && takenFrom(batch, runFrom, w.rowId);
      if (batch.length > 0 && (repeat || bytes + w.bytes > b.maxBytes || batch.length >= b.maxRows)) {
        out.push(batch);
        batch = [];
        bytes = 0;
        runFrom = 0;
      }
      batch.push(w);
      bytes += w.bytes;
      prevHash = hash;
    }
    const rest = rows.length > n ? rows.slice(n) : [];
    let restBytes = 0;
    for (const r of rest) restBytes += r.bytes;
    if (batch.length > 0) {
      // A partial last batch waits for more rows (staged again, ahead of later ones) unless the linger has passed.
      const partial = batch.length < b.maxRows && bytes < b.maxBytes && out.length > 0 && !this.lingered;
      if (partial) {
        rest.unshift(...batch);
        restBytes += bytes;
      } else out.push(batch);
    }
    this.grouped = out;
    this.nextBatch = 0;
    this.staged = rest;
    this.stagedBytes = restBytes;
  }
}

/** True when batch[from..] (the rows taken from one partition) holds a write of the row rowId. */
function takenFrom(batch: readonly StagedRow[], from: number, rowId: number): boolean {
  for (let i = from; i < batch.length; i++) if (batch[i].rowId === rowId) return true;
  return false;
}
