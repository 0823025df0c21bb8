/** The edge layout's rules against a model of KIP-889's versioned store: every as-of read, any order of puts. */
import fc from 'fast-check';
import { answerFromSlice, EdgeRow, edgeRowsForPut, tableOrder } from '../../../src/store/cassandra/version-edges';

/** A table of one key: rows upserted by (prev, from), kept in table order. */
class EdgeTable {
  private rows = new Map<string, EdgeRow<string>>();

  write(r: EdgeRow<string>): void {
    const id = `${r.prev}:${r.from}`;
    const had = this.rows.get(id);
    // An upsert: a marker written over a value row leaves its value cell (INSERT of the key columns only).
    this.rows.set(id, had && r.marker && !had.marker ? had : r);
  }

  slice(asOf: number, limit: number): EdgeRow<string>[] {
    return [...this.rows.values()]
      .filter((r) => r.prev <= asOf)
      .sort(tableOrder)
      .slice(0, limit);
  }
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
          let got = answerFromSlice(table.slice(asOf, limit), asOf);
          // 'more': the reader's second, longer read.
          if (got === 'more') got = answerFromSlice(table.slice(asOf, 1000), asOf);
          expect(got).toEqual(want);
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
