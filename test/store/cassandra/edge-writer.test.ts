/** EdgeWriter against an in-memory edge table whose writes land late and in any order: every answer as the model's. */
import { types } from 'cassandra-driver';
import fc from 'fast-check';
import { AdjunctError, isRecordFailure } from '../../../src/errors';
import {
  EdgeTableReader,
  EdgeSliceRead,
  SliceRequest,
  sliceFromFirstRows,
  StoredEdge,
} from '../../../src/store/cassandra/edge-table-reader';
import { EdgeWriter } from '../../../src/store/cassandra/edge-writer';
import { int64Bytes } from '../../../src/store/cassandra/cql-types';
import { CoalescedWrite } from '../../../src/store/cassandra/write-batcher';
import { answerFromSlice, NO_PREV, tableOrder } from '../../../src/store/cassandra/version-edges';
import { RowListener } from '../../../src/store/types';

/** A time bound as the executor gives it: a number (batched rows), or 8 bytes. */
const int64 = (b: number | Buffer): number =>
  typeof b === 'number' ? b : b.equals(Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 0])) ? NO_PREV : Number(b.readBigInt64BE(0));
/** As the executor with a batcher: times as numbers where they are safe integers, else 8 bytes. */
const rowInt64 = (n: number): number | Buffer => (Number.isSafeInteger(n) ? n : int64Bytes(n));

/**
 * Rows by key, upserted by (prev, from, writer); writes are held until `land` applies them, in the order it picks. As
 * with the batcher's client timestamps (fixed in issue order), a later write of a row wins whenever it lands.
 */
class FakeTable {
  readonly rows = new Map<string, Map<string, StoredEdge & { seq: number }>>();
  readonly inFlight: { row: CoalescedWrite; listener: RowListener; seq: number }[] = [];
  private seq = 0;

  readonly rowInt64 = rowInt64;

  issueRow(row: CoalescedWrite, _what: string, listener: RowListener): void {
    this.inFlight.push({ row, listener, seq: ++this.seq });
  }

  /** Lands the in-flight write at index i (modulo their number). */
  land(i: number): void {
    if (this.inFlight.length === 0) return;
    const [{ row, listener, seq }] = this.inFlight.splice(i % this.inFlight.length, 1);
    const [key, prev, from, value, writer] = row.params as [Buffer, number | Buffer, number | Buffer, Buffer | null, Buffer];
    const f = int64(from);
    // A marker leaves `value` unset: a null would write a cell tombstone into a row that never held a value.
    if (writer.length === 0 && value !== types.unset) throw new Error(`a marker bound value ${String(value)}, not unset`);
    const edge = {
      prev: int64(prev),
      from: f,
      marker: writer.length === 0,
      value: { validFrom: f, value: writer.length === 0 ? null : value, writer: writer.toString() },
      seq,
    };
    const id = key.toString('hex');
    if (!this.rows.has(id)) this.rows.set(id, new Map());
    const rows = this.rows.get(id)!;
    const rowId = `${edge.prev}:${edge.from}:${edge.marker}`;
    if ((rows.get(rowId)?.seq ?? 0) < seq) rows.set(rowId, edge);
    listener.rowWritten();
  }

  slice(key: Buffer, asOf: number): EdgeSliceRead {
    const rows = this.stored(key).filter((r) => r.prev <= asOf);
    const answer = answerFromSlice(rows, asOf);
    if (answer === 'more') throw new Error('a full slice always holds the value row');
    return answer === null ? (rows.length === 0 ? { answer } : { answer, first: rows[0].from }) : { answer };
  }

  /** As the grouped read: each key's first 4 rows whatever their prev, then sliceFromFirstRows. */
  firstSlices(reqs: readonly SliceRequest[]): (EdgeSliceRead | undefined)[] {
    this.groupedReads++;
    return reqs.map((r) => sliceFromFirstRows(this.stored(r.key).slice(0, 4), r.t));
  }

  groupedReads = 0;

  private stored(key: Buffer): StoredEdge[] {
    return [...(this.rows.get(key.toString('hex'))?.values() ?? [])].sort(tableOrder);
  }
}

/** A reader over the fake table: grouped reads of keys seen first resolve on a later tick, as a request would. */
function fakeReader(table: FakeTable): EdgeTableReader {
  const reader = {
    exec: table,
    edges: { insert: 'INSERT' },
    groupOf: () => '*',
    slice: async (k: Buffer, t: number) => table.slice(k, t),
    firstSlices: async (reqs: readonly SliceRequest[]) => table.firstSlices(reqs),
  };
  return reader as unknown as EdgeTableReader;
}

const step = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ put: fc.constantFrom('a', 'b', 'c'), t: fc.integer({ min: 0, max: 30 }), v: fc.integer({ min: 0, max: 9 }) }),
  },
  { weight: 4, arbitrary: fc.record({ land: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ tick: fc.constant(true) }) },
);

describe('EdgeWriter', () => {
  it('plans from what it keeps, reads after a key’s writes land, forgets keys and tells colliding keys apart', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 60 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.constantFrom(2, 3, 16),
        async (steps, maxKeys, collide, ring) => {
          const table = new FakeTable();
          const writer = new EdgeWriter(fakeReader(table), Buffer.from('w'), maxKeys, ring);
          const model = new Map<string, Map<number, number>>();
          const plans: (() => void)[] = [];
          let settled = 0;
          let issued = 0;
          const listener: RowListener = {
            rowWritten: () => settled++,
            rowFailed: (e) => {
              throw e;
            },
          };
          for (const s of steps) {
            if ('put' in s) {
              const key = Buffer.from(s.put);
              // The validTo planned: the next version after t among the puts of the key sent before it.
              const expected = [...(model.get(s.put)?.keys() ?? [])].filter((x) => x > s.t).sort((x, y) => x - y)[0];
              let planned: number | undefined | null = null;
              // Forced collisions: a and c share a hash (and evictions happen in both of the writer's maps).
              writer.send(
                key,
                collide ? s.put.charCodeAt(0) % 2 : s.put.charCodeAt(0),
                s.t,
                Buffer.from([s.v]),
                listener,
                (next) => (planned = next),
              );
              plans.push(() => expect(planned).toBe(expected));
              issued++;
              if (!model.has(s.put)) model.set(s.put, new Map());
              model.get(s.put)!.set(s.t, s.v);
            } else if ('land' in s) table.land(s.land);
            else await new Promise((r) => setImmediate(r));
          }
          // Land everything (reads wait for writes, and writes for reads).
          for (let i = 0; i < 1000 && settled < issued; i++) {
            table.land(0);
            await new Promise((r) => setImmediate(r));
          }
          expect(settled).toBe(issued);
          for (const check of plans) check();
          // Keys with writes in flight are kept; once idle, a new key brings the count back within maxKeys (per map).
          writer.send(Buffer.from('z'), collide ? 7 : 1, 0, null, listener);
          table.land(0);
          expect(writer.size).toBeLessThanOrEqual(collide ? maxKeys + 1 : maxKeys);
          for (const [k, versions] of model) {
            const times = [...versions.keys()].sort((x, y) => x - y);
            for (let asOf = -1; asOf <= 31; asOf++) {
              const floor = times.filter((x) => x <= asOf).pop();
              const got = table.slice(Buffer.from(k), asOf).answer;
              if (floor === undefined) expect(got).toBeNull();
              else
                expect(got && { from: got.from, validTo: got.validTo, value: got.row.value!.value![0] }).toEqual({
                  from: floor,
                  validTo: times.find((x) => x > asOf) ?? null,
                  value: versions.get(floor),
                });
            }
          }
        },
      ),
      {
        numRuns: 1000,
        examples: [
          // A late put older than all kept (here: a forgotten key) leaves the key unknown; the next put's read must wait for its rows.
          [
            [
              { put: 'a', t: 10, v: 1 },
              { tick: true },
              { land: 0 },
              { put: 'b', t: 0, v: 2 },
              { tick: true },
              { land: 0 },
              { put: 'a', t: 5, v: 3 },
              { tick: true },
              { put: 'a', t: 7, v: 4 },
            ],
            1,
            false,
            16,
          ],
        ],
      },
    );
  });
});

describe('EdgeWriter when the store refuses a row', () => {
  const refused = () => new AdjunctError('value too large', { code: 'RECORD_REJECTED', retriable: false });

  it('a row refused at once (inside its own issue) fails its put once, stops the pipeline, and the key reads again', async () => {
    let refuseNext = true;
    let reads = 0;
    const issued: CoalescedWrite[] = [];
    const exec = {
      rowInt64,
      issueRow: (row: CoalescedWrite, _what: string, listener: RowListener) => {
        issued.push(row);
        if (refuseNext) {
          refuseNext = false;
          listener.rowFailed(refused()); // as the batcher fails a row it will never send
        } else listener.rowWritten();
      },
    };
    const reader = {
      exec,
      edges: { insert: 'INSERT' },
      groupOf: () => '*',
      slice: async () => (reads++, { answer: null }),
      firstSlices: async (reqs: readonly SliceRequest[]) => (reads++, reqs.map(() => ({ answer: null }))),
    };
    const writer = new EdgeWriter(reader as unknown as EdgeTableReader, Buffer.from('w'), 10);
    const failures: unknown[] = [];
    let written = 0;
    const listener: RowListener = { rowWritten: () => written++, rowFailed: (e) => failures.push(e) };
    // Two puts of a key not kept: the first waits for a read, the second behind it.
    writer.send(Buffer.from('k'), 1, 10, Buffer.from('a'), listener);
    writer.send(Buffer.from('k'), 1, 20, Buffer.from('b'), listener);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ code: 'VERSION_LINK_REFUSED', retriable: false });
    expect(isRecordFailure(failures[0])).toBe(false); // never dead-lettered: the pipeline stops
    // The refusal dropped what the writer kept (it counted version 10): the second put, planned after it, read again.
    expect(written).toBe(1);
    expect(reads).toBe(2);
    // What that read found is kept again: an in-order put needs no read.
    writer.send(Buffer.from('k'), 1, 30, Buffer.from('c'), listener);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(reads).toBe(2);
    expect(written).toBe(2);
    expect(issued).toHaveLength(3);
  });

  it('a stopped task’s read stops retrying, and its waiting puts fail without reads of their own', async () => {
    let stopped = false;
    const reads: (() => boolean)[] = [];
    const exec = { rowInt64, issueRow: (_row: CoalescedWrite, _what: string, listener: RowListener) => listener.rowWritten() };
    const outage = new AdjunctError('no hosts', { code: 'CASSANDRA_UNAVAILABLE', retriable: true });
    const reader = {
      exec,
      edges: { insert: 'INSERT' },
      // As the executor does once `abandoned` holds: the retries stop and the last failure is thrown.
      groupOf: () => '*',
      slice: () => Promise.reject(new Error('a key not known is read by the grouped read')),
      firstSlices: async (reqs: readonly SliceRequest[], abandoned?: () => boolean) => {
        reads.push(abandoned!);
        await new Promise((r) => setImmediate(r));
        if (abandoned!()) throw outage;
        return reqs.map(() => ({ answer: null }));
      },
    };
    const writer = new EdgeWriter(reader as unknown as EdgeTableReader, Buffer.from('w'), 10);
    const failures: unknown[] = [];
    const listener: RowListener = { rowWritten: () => undefined, rowFailed: (e) => failures.push(e), abandoned: () => stopped };
    for (const t of [10, 20, 5]) writer.send(Buffer.from('k'), 1, t, Buffer.from('v'), listener);
    stopped = true;
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(1);
    expect(failures).toEqual([outage, outage, outage]);
    // The key is free again: a put of a live task reads and is written.
    stopped = false;
    let written = 0;
    writer.send(Buffer.from('k'), 1, 30, Buffer.from('v'), { ...listener, rowWritten: () => written++ });
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(2);
    expect(written).toBe(1);
  });
});
