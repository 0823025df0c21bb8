import fc from 'fast-check';
import { keyHash, versionRowId } from '../../../src/store/cassandra/key-hash';
import { StagedRows } from '../../../src/store/cassandra/staged-rows';
import type { CoalescedWrite } from '../../../src/store/cassandra/write-batcher';

/** A staged row of Cassandra partition `partition`, version `version` (same partition + version = same row). */
interface Row extends CoalescedWrite {
  name: string;
  seq: number;
}

let seq = 0;
const row = (partition: string, version: number, bytes = 100): Row => ({
  query: 'INSERT',
  params: [],
  routingKey: Buffer.from(partition),
  partitionHash: keyHash(Buffer.from(partition)),
  rowId: versionRowId(keyHash(Buffer.from(partition)), version),
  bytes,
  name: `${partition}@${version}`,
  seq: seq++,
});

const names = (rows: Row[]) => rows.map((r) => r.name);
const bounds = { maxRows: 4, maxBytes: 1000 };

/** True when every partition's rows sit next to each other in `batch`, in issue order. */
function contiguousInIssueOrder(batch: Row[]): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < batch.length; i++) {
    const p = batch[i].name.split('@')[0];
    const prev = i > 0 ? batch[i - 1] : undefined;
    if (prev?.name.split('@')[0] === p) {
      if (prev.seq > batch[i].seq) return false;
      continue;
    }
    if (seen.has(p)) return false;
    seen.add(p);
  }
  return true;
}

describe('StagedRows', () => {
  it("puts a partition's rows next to each other in a batch, in issue order", () => {
    const s = new StagedRows<Row>('g');
    for (const r of [row('a', 1), row('b', 1), row('a', 2), row('c', 1), row('b', 2), row('a', 3)]) s.add(r);
    expect(s.rows).toBe(6);
    const b = s.cut({ maxRows: 8, maxBytes: 10_000 });
    expect(b).toHaveLength(6);
    expect(contiguousInIssueOrder(b)).toBe(true);
    expect(s.rows).toBe(0);
    expect(s.fillsBatch({ maxRows: 1, maxBytes: 1 })).toBe(false);
  });

  it('bounds a batch by rows and bytes, lets a row larger than maxBytes leave alone, and keeps a partial last batch until lingered', () => {
    const s = new StagedRows<Row>('g');
    for (const r of [row('a', 1, 400), row('a', 2, 400), row('a', 3, 400), row('a', 4, 5000), row('a', 5, 10)]) s.add(r);
    expect(s.fillsBatch(bounds)).toBe(true);
    expect(names(s.cut(bounds))).toEqual(['a@1', 'a@2']);
    expect(names(s.cut(bounds))).toEqual(['a@3']);
    expect(names(s.cut(bounds))).toEqual(['a@4']);
    expect(s.fillsBatch(bounds)).toBe(false);
    expect(s.rows).toBe(1);
    s.lingered = true;
    expect(names(s.cut(bounds))).toEqual(['a@5']);
    expect(s.rows).toBe(0);
    expect(s.fillsBatch({ maxRows: 1, maxBytes: 1 })).toBe(false);
  });

  it('cuts a batch at maxRows', () => {
    const s = new StagedRows<Row>('g');
    for (let v = 1; v <= 5; v++) s.add(row('a', v));
    expect(names(s.cut(bounds))).toEqual(['a@1', 'a@2', 'a@3', 'a@4']);
    expect(s.fillsBatch(bounds)).toBe(false);
  });

  it('puts a later write of a row in a later batch than the earlier write', () => {
    const s = new StagedRows<Row>('g');
    for (const r of [row('a', 1), row('a', 2), row('a', 1), row('a', 3)]) s.add(r);
    s.lingered = true;
    const first = s.cut(bounds);
    expect(names(first)).toEqual(['a@1', 'a@2']);
    const second = s.cut(bounds);
    expect(names(second)).toEqual(['a@1', 'a@3']);
    expect(second[0].seq).toBeGreaterThan(first[0].seq);
  });

  it('sends every batch of a grouped chunk before any row staged after it', () => {
    const s = new StagedRows<Row>('g');
    for (let v = 1; v <= 8; v++) s.add(row(`p${v % 3}`, v));
    const early = new Set(s.cut(bounds).map((r) => r.seq));
    const late = row('p0', 99);
    s.add(late);
    const next = s.cut(bounds);
    expect(next).toHaveLength(4);
    expect(next).not.toContain(late);
    for (const r of next) early.add(r.seq);
    expect(early.size).toBe(8);
    s.lingered = true;
    expect(s.cut(bounds)).toEqual([late]);
  });

  it('property: every row leaves once, within bounds, never beside another write of itself, and after its earlier writes', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        p: fc.integer({ min: 0, max: 5 }),
        v: fc.integer({ min: 0, max: 3 }),
        bytes: fc.integer({ min: 1, max: 1500 }),
      }),
      fc.record({ kind: fc.constant('cut' as const) }),
      fc.record({ kind: fc.constant('linger' as const) }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 80 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 200, max: 2000 }),
        (ops, maxRows, maxBytes) => {
          const b = { maxRows, maxBytes };
          const s = new StagedRows<Row>('g');
          const added: Row[] = [];
          const cutAt = new Map<Row, number>();
          let cuts = 0;
          const cutOnce = () => {
            const batch = s.cut(b);
            expect(batch.length).toBeGreaterThan(0);
            expect(batch.length).toBeLessThanOrEqual(maxRows);
            const bytes = batch.reduce((n, r) => n + r.bytes, 0);
            if (batch.length > 1) expect(bytes).toBeLessThanOrEqual(maxBytes);
            expect(new Set(batch.map((r) => r.name)).size).toBe(batch.length);
            expect(contiguousInIssueOrder(batch)).toBe(true);
            for (const r of batch) {
              expect(cutAt.has(r)).toBe(false);
              cutAt.set(r, cuts);
            }
            cuts++;
            // As the batcher does: the linger ends when nothing is staged any more.
            if (s.rows === 0) s.lingered = false;
          };
          for (const o of ops) {
            if (o.kind === 'add') {
              const r = row(`p${o.p}`, o.v, o.bytes);
              added.push(r);
              s.add(r);
            } else if (o.kind === 'linger') s.lingered = s.rows > 0;
            else if (s.rows > 0 && (s.lingered || s.fillsBatch(b))) cutOnce();
          }
          s.lingered = s.rows > 0;
          while (s.rows > 0) cutOnce();
          expect(s.fillsBatch({ maxRows: 1, maxBytes: 1 })).toBe(false);
          expect(cutAt.size).toBe(added.length);
          // Writes of one row leave in issue order, each in a later batch than the one before.
          for (let i = 0; i < added.length; i++)
            for (let j = i + 1; j < added.length; j++)
              if (added[i].name === added[j].name) expect(cutAt.get(added[j])!).toBeGreaterThan(cutAt.get(added[i])!);
        },
      ),
      { numRuns: 300 },
    );
  });
});
