/** The edge layout's rules against a model of KIP-889's versioned store: every as-of read, any order of puts. */
import fc from 'fast-check';
import {
  answerFromSlice,
  EdgeRow,
  edgeRowsForPut,
  KnownTimes,
  planFromKnown,
  planFromRead,
  rememberPut,
  SliceAnswer,
  sliceHead,
  tableOrder,
  valueRowBound,
  valueRowOf,
} from '../../../src/store/cassandra/version-edges';

/** A table of one key: rows upserted by (prev, from, marker), kept in table order (a marker's writer is its own clustering value). */
class EdgeTable {
  private rows = new Map<string, EdgeRow<string>>();

  write(r: EdgeRow<string>): void {
    this.rows.set(`${r.prev}:${r.from}:${r.marker}`, r);
  }

  slice(asOf: number, limit: number): EdgeRow<string>[] {
    return [...this.rows.values()]
      .filter((r) => r.prev <= asOf)
      .sort(tableOrder)
      .slice(0, limit);
  }
}

/** What the reader answers: a slice of `limit` rows, then (its value row further on) the slice from just below the floor. */
function readAsReader(table: EdgeTable, asOf: number, limit: number): SliceAnswer<string> | null {
  const first = table.slice(asOf, limit);
  const got = answerFromSlice(first, asOf);
  if (got !== 'more') return got;
  const head = sliceHead(first, asOf)!;
  const row = valueRowOf(table.slice(valueRowBound(head.from), 1000), head.from);
  if (row === undefined) throw new Error(`no value row of ${head.from} below it`);
  return { ...head, row };
}

const puts = fc.array(fc.record({ t: fc.integer({ min: 0, max: 40 }), v: fc.string({ maxLength: 3 }) }), { maxLength: 40 });

describe('version edges', () => {
  it('a slice prev <= asOf answers floor, validTo and value as the versioned store does (late puts, rewrites, any order)', () => {
    fc.assert(
      fc.property(puts, fc.integer({ min: 1, max: 6 }), (ps, limit) => {
        const table = new EdgeTable();
        const versions: number[] = [];
        const model = new Map<number, string>();
        for (const { t, v } of ps) {
          for (const r of edgeRowsForPut(versions, t, v)) table.write(r);
          if (!model.has(t)) versions.splice(versions.filter((x) => x < t).length, 0, t);
          model.set(t, v);
        }
        for (let asOf = -1; asOf <= 41; asOf++) {
          const floor = versions.filter((x) => x <= asOf).pop();
          const next = versions.find((x) => x > asOf);
          const want = floor === undefined ? null : { from: floor, validTo: next ?? null, value: model.get(floor) };
          const got = readAsReader(table, asOf, limit);
          expect(got && { from: got.from, validTo: got.validTo, value: got.row.value }).toEqual(want);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('a writer that knows only recent version times, forgets keys and reads when it must, writes what a full view would', () => {
    const step = fc.record({ t: fc.integer({ min: 0, max: 40 }), v: fc.string({ maxLength: 3 }), forget: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 4 }), (ps, limit, ring) => {
        const table = new EdgeTable();
        const versions: number[] = [];
        const model = new Map<number, string>();
        let known: KnownTimes | undefined;
        const read = (asOf: number) => readAsReader(table, asOf, limit);
        for (const { t, v, forget } of ps) {
          if (forget) known = undefined;
          let plan = known === undefined ? undefined : planFromKnown(known, t);
          if (plan === undefined) {
            const answer = read(t);
            const first = answer === null ? table.slice(t, 1)[0]?.from : undefined;
            const fromRead = planFromRead(answer, first, t);
            plan = fromRead.plan;
            known = fromRead.known;
          } else rememberPut(known!, t, ring);
          // The validTo a put returns: the next version after it.
          expect(plan.next).toBe(versions.find((x) => x > t));
          table.write({ prev: plan.prev, from: t, marker: false, value: v });
          if (plan.marker) table.write({ prev: t, from: plan.next!, marker: true });
          if (!model.has(t)) versions.splice(versions.filter((x) => x < t).length, 0, t);
          model.set(t, v);
        }
        for (let asOf = -1; asOf <= 41; asOf++) {
          const floor = versions.filter((x) => x <= asOf).pop();
          const next = versions.find((x) => x > asOf);
          const got = read(asOf);
          if (floor === undefined) expect(got).toBeNull();
          else
            expect(got && { from: got.from, validTo: got.validTo, value: got.row.value }).toEqual({
              from: floor,
              validTo: next ?? null,
              value: model.get(floor),
            });
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('a put in order writes one row under the newest version; a late one adds a marker under itself for its successor', () => {
    expect(edgeRowsForPut([10, 20], 30, 'c')).toEqual([{ prev: 20, from: 30, marker: false, value: 'c' }]);
    expect(edgeRowsForPut([10, 30], 20, 'b')).toEqual([
      { prev: 10, from: 20, marker: false, value: 'b' },
      { prev: 20, from: 30, marker: true },
    ]);
    expect(edgeRowsForPut([10, 20], 20, 'b2')).toEqual([{ prev: 10, from: 20, marker: false, value: 'b2' }]);
  });
});

describe('rememberPut', () => {
  /** The ring's rule spelled out: insert in order, then drop the oldest past `ring` (which makes it incomplete). */
  function reference(known: KnownTimes, t: number, ring: number): void {
    if (known.times.includes(t)) return;
    known.times.push(t);
    known.times.sort((a, b) => a - b);
    if (known.times.length > ring) {
      known.times.shift();
      known.complete = false;
    }
  }

  it('keeps the newest `ring` distinct times in order, and says when it dropped one (any order of puts)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 60 }), fc.integer({ min: 1, max: 17 }), (ts, ring) => {
        const got: KnownTimes = { times: [], complete: true };
        const want: KnownTimes = { times: [], complete: true };
        for (const t of ts) {
          rememberPut(got, t, ring);
          reference(want, t, ring);
          expect(got).toEqual(want);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
