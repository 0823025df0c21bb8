/** sliceFromFirstRows: a key's first rows, read without a bound, answer a slice exactly when they can, and say so otherwise. */
import fc from 'fast-check';
import { sliceFromFirstRows, StoredEdge } from '../../../src/store/cassandra/edge-table-reader';
import { answerFromSlice, edgeRowsForPut, lowerBound, tableOrder } from '../../../src/store/cassandra/version-edges';

/** Rows of one key after puts of these times in this order (each planned from every version before it), in table order. */
function tableAfter(times: readonly number[]): StoredEdge[] {
  const rows = new Map<string, StoredEdge>();
  const versions: number[] = [];
  for (const t of times) {
    for (const r of edgeRowsForPut(versions, t, { validFrom: t, value: Buffer.from([t]), writer: 'w' }))
      rows.set(`${r.prev}:${r.from}:${r.marker}`, r.marker ? { ...r, value: { validFrom: r.from, value: null, writer: '' } } : r);
    const at = lowerBound(versions, t);
    if (versions[at] !== t) versions.splice(at, 0, t);
  }
  return [...rows.values()].sort(tableOrder);
}

describe('sliceFromFirstRows', () => {
  it('answers as the slice prev <= t does whenever it answers, and answers when the first rows hold the whole answer', () => {
    let settled = 0;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 12 }), fc.integer({ min: -1, max: 31 }), (times, t) => {
        const rows = tableAfter(times);
        const got = sliceFromFirstRows(rows.slice(0, 4), t);
        const slice = rows.filter((r) => r.prev <= t);
        const answer = answerFromSlice(slice, t);
        if (answer === 'more') throw new Error('a whole slice always holds the value row');
        const want = answer === null ? (slice.length === 0 ? { answer: null } : { answer: null, first: slice[0].from }) : { answer };
        // Rows with prev after t come first: then the first rows are not the slice's, and nothing is answered.
        if (rows.length > 0 && rows[0].prev > t) expect(got).toBeUndefined();
        else if (answerFromSlice(rows.slice(0, 4), t) !== 'more') expect(got).toEqual(want);
        if (got !== undefined) {
          expect(got).toEqual(want);
          settled++;
        }
      }),
      { numRuns: 2000 },
    );
    expect(settled).toBeGreaterThan(500);
  });

  it('a key with no rows has no version; a first version after t is named', () => {
    expect(sliceFromFirstRows([], 5)).toEqual({ answer: null });
    expect(sliceFromFirstRows(tableAfter([10]), 5)).toEqual({ answer: null, first: 10 });
    expect(sliceFromFirstRows(tableAfter([10, 20]), 5)).toBeUndefined(); // the row (10, 20) lies after 5
    expect(sliceFromFirstRows(tableAfter([10, 20]), 25)?.answer).toMatchObject({ from: 20, validTo: null });
  });
});
