import { keyHash } from './key-hash';
import type { CoalescedWrite } from './write-batcher';

/** A staged row: its write and whatever the batcher keeps beside it. */
export interface StagedRow {
  write: CoalescedWrite;
}

/** Bounds of one batch cut from staged rows. */
export interface CutBounds {
  maxBytes: number;
  maxRows: number;
}

/**
 * Rows of one replica group waiting for a request slot, indexed by Cassandra partition (the routing key's hash), so a
 * batch takes a partition's rows together: Cassandra applies the rows of one partition as one mutation, which costs it
 * far less than one mutation per row. The batch's composition is decided only when a slot is free (late binding), so
 * grouping never holds a row back: a row waits only while every slot is busy, or for the linger of a partial batch.
 *
 * Order: a partition's rows keep their issue order, and a later write of a row already in the batch being cut stays
 * staged for a later batch (which gets a later timestamp). Partitions are served oldest first and round-robin, so a
 * busy partition cannot starve the others. A hash collision only puts two partitions' rows next to each other.
 */
export class StagedRows<R extends StagedRow> {
  /** Partition hash → its staged rows in issue order (one row is kept bare: most partitions hold one). */
  private readonly byPartition = new Map<number, R | R[]>();
  /** Rows staged. */
  rows = 0;
  /** Estimated bytes staged. */
  bytes = 0;
  /** True once the oldest staged row has waited the linger (or a flush asked): a partial batch may leave now. */
  lingered = false;
  /** The linger timer of the oldest staged row. */
  timer?: NodeJS.Timeout;

  constructor(readonly group: string) {}

  /** Stages a row behind the earlier rows of its partition. */
  add(r: R): void {
    const h = keyHash(r.write.routingKey) & 0x3fffffff; // a Smi: no heap number per row
    const prev = this.byPartition.get(h);
    if (prev === undefined) this.byPartition.set(h, r);
    else if (Array.isArray(prev)) prev.push(r);
    else this.byPartition.set(h, [prev, r]);
    this.rows++;
    this.bytes += r.write.bytes;
  }

  /** True when the staged rows fill at least one batch. */
  fillsBatch(b: CutBounds): boolean {
    return this.rows >= b.maxRows || this.bytes >= b.maxBytes;
  }

  /**
   * Takes the next batch: whole partitions, oldest first, until a bound is reached (a row larger than maxBytes leaves
   * alone). Never empty when rows are staged. A partition left with rows moves behind the others.
   */
  cut(b: CutBounds): R[] {
    const batch: R[] = [];
    let bytes = 0;
    for (const h of this.byPartition.keys()) {
      const entry = this.byPartition.get(h)!;
      if (!Array.isArray(entry)) {
        // Most partitions hold one row: taken whole, or left in place when it does not fit.
        if (batch.length > 0 && bytes + entry.write.bytes > b.maxBytes) break;
        batch.push(entry);
        bytes += entry.write.bytes;
        this.byPartition.delete(h);
        if (batch.length >= b.maxRows) break;
        continue;
      }
      const from = batch.length;
      let kept: R[] | undefined;
      let full = false;
      for (const r of entry) {
        const w = r.write;
        if (!full && batch.length > 0 && bytes + w.bytes > b.maxBytes) full = true;
        // Once full, and for a later write of a row the batch already holds, the row (and every later one) stays.
        if (full || takenFrom(batch, from, w.rowId)) {
          (kept ??= []).push(r);
          continue;
        }
        batch.push(r);
        bytes += w.bytes;
        if (batch.length >= b.maxRows) full = true;
      }
      if (kept === undefined) this.byPartition.delete(h);
      else if (!full || batch.length === from) this.byPartition.set(h, kept.length === 1 ? kept[0] : kept); // in place
      else {
        // Round-robin: the rest of a partition the batch filled up in waits behind the other partitions.
        this.byPartition.delete(h);
        this.byPartition.set(h, kept.length === 1 ? kept[0] : kept);
      }
      if (full) break;
    }
    this.rows -= batch.length;
    this.bytes -= bytes;
    return batch;
  }
}

/** True when batch[from..] (the rows taken from one partition) holds a write of the row rowId. */
function takenFrom(batch: readonly StagedRow[], from: number, rowId: number): boolean {
  for (let i = from; i < batch.length; i++) if (batch[i].write.rowId === rowId) return true;
  return false;
}
