import * as fc from 'fast-check';
import { installLeanRowParsing, leanParseRows } from '../../../src/store/cassandra/fast-row-parsing';

/* eslint-disable @typescript-eslint/no-require-imports */
const streams = require('cassandra-driver/lib/streams');
const Encoder = require('cassandra-driver/lib/encoder');
const { FrameHeader, Row } = require('cassandra-driver/lib/types');
/* eslint-enable @typescript-eslint/no-require-imports */

// The driver's own method, captured before this file installs the patch.
const original = streams.Parser.prototype.parseRows;
const RESULT = 0x08;

type Cell = Buffer | null;
interface Column {
  name: string;
  code: number;
  cell: fc.Arbitrary<Cell>;
}

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const short = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
const str = (s: string) => Buffer.concat([short(Buffer.byteLength(s)), Buffer.from(s)]);
const bigint = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
});
const COLUMNS: Column[] = [
  { name: 'prev', code: 0x0002, cell: bigint },
  { name: 'value', code: 0x0003, cell: fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)) },
  { name: 'writer', code: 0x000d, cell: fc.string({ maxLength: 20 }).map((s) => Buffer.from(s)) },
  { name: 'n', code: 0x0009, cell: fc.integer().map(int32) },
  { name: 'flag', code: 0x0004, cell: fc.boolean().map((b) => Buffer.from([b ? 1 : 0])) },
];

/** Result metadata flags: global table spec, more pages (a page state follows), a continuous page (its index follows). */
const GLOBAL_SPEC = 0x0001;
const MORE_PAGES = 0x0002;
const CONTINUOUS_PAGE = 0x40000000;

/** A RESULT frame body of kind ROWS: metadata (global table spec, and `flags`) for `cols`, then the rows' cells. */
function rowsFrame(cols: Column[], rows: Cell[][], flags = 0): Buffer {
  const parts = [int32(2), int32(GLOBAL_SPEC | flags), int32(cols.length)];
  if (flags & MORE_PAGES) parts.push(int32(3), Buffer.from([1, 2, 3]));
  if (flags & CONTINUOUS_PAGE) parts.push(int32(5));
  parts.push(str('ks'), str('tbl'));
  for (const c of cols) parts.push(str(c.name), short(c.code));
  parts.push(int32(rows.length));
  for (const r of rows) for (const cell of r) parts.push(cell === null ? int32(-1) : Buffer.concat([int32(cell.length), cell]));
  return Buffer.concat(parts);
}

/** Emitted by a Parser → ResultEmitter pipe, as plain data: 'result' rows, or 'row' events when streamed by row. */
async function parse(method: unknown, body: Buffer, opts: { byRow?: boolean; split?: number } = {}): Promise<unknown> {
  const parser = new streams.Parser({ objectMode: true }, new Encoder(4, {}));
  parser.parseRows = method;
  const emitter = new streams.ResultEmitter({ objectMode: true });
  parser.pipe(emitter);
  const streamId = 7;
  if (opts.byRow) parser.setOptions(streamId, { byRow: true });
  const header = new FrameHeader(4, 0, streamId, RESULT, body.length);
  const plain = (row: Record<string, unknown>) => [
    Object.getPrototypeOf(row) === Row.prototype,
    Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? `0x${v.toString('hex')}` : v === null ? null : String(v)]),
  ];
  const seen: unknown[] = [];
  const done = new Promise<void>((resolve) => {
    emitter.on('result', (_h: unknown, err: Error | null, result: { rows?: Record<string, unknown>[]; meta?: { columns: unknown[] } }) => {
      seen.push(err ? ['error', err.message] : ['result', (result.rows ?? []).map(plain), result.meta]);
      resolve();
    });
    emitter.on('row', (_h: unknown, row: Record<string, unknown>) => seen.push(['row', plain(row)]));
    emitter.on('byRowCompleted', () => resolve());
  });
  const cut = opts.split ?? 0;
  if (cut > 0) parser.write({ header, chunk: body.subarray(0, cut), offset: 0, frameEnded: false });
  parser.write({ header, chunk: body.subarray(cut), offset: 0, frameEnded: true });
  await done;
  return seen;
}

const frames = fc
  .subarray(COLUMNS, { minLength: 1 })
  .chain((cols) =>
    fc.tuple(fc.constant(cols), fc.array(fc.tuple(...cols.map((c) => fc.option(c.cell, { freq: 5 }))), { maxLength: 6 }), fc.nat()),
  );

describe('lean row parsing', () => {
  const lean = leanParseRows(original, Row);

  it('installs on the pinned driver (its self-check agrees)', () => {
    expect(installLeanRowParsing()).toBe(true);
    expect(streams.Parser.prototype.parseRows).not.toBe(original);
  });

  it('emits exactly the rows, values and metadata the driver emits, whole or in two chunks', async () => {
    await fc.assert(
      fc.asyncProperty(frames, async ([cols, rows, cut]) => {
        const body = rowsFrame(cols, rows);
        const split = 1 + (cut % (body.length - 1));
        const expected = await parse(original, body);
        expect((expected as unknown[]).length).toBe(1);
        expect(await parse(lean, body)).toEqual(expected);
        expect(await parse(lean, body, { split })).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a page state and leaves continuous pages (DSE) to the driver', async () => {
    const rows = [[Buffer.alloc(8, 1)], [Buffer.alloc(8, 2)]];
    const paged = rowsFrame([COLUMNS[0]], rows, MORE_PAGES);
    const expected = (await parse(original, paged)) as unknown[][];
    expect(JSON.stringify(expected)).toContain('pageState');
    expect(await parse(lean, paged)).toEqual(expected);
    const continuous = rowsFrame([COLUMNS[0]], rows, CONTINUOUS_PAGE);
    const driverOwn = jest.fn();
    const parser = new streams.Parser({ objectMode: true }, new Encoder(4, {}));
    parser.parseRows = leanParseRows(driverOwn, Row);
    parser.write({ header: new FrameHeader(4, 0, 9, RESULT, continuous.length), chunk: continuous, offset: 0, frameEnded: true });
    expect(driverOwn).toHaveBeenCalledTimes(1);
  });

  it('leaves results streamed row by row (eachRow, stream) to the driver', async () => {
    const body = rowsFrame(COLUMNS.slice(0, 2), [
      [Buffer.alloc(8, 1), Buffer.from('a')],
      [Buffer.alloc(8, 2), null],
    ]);
    const expected = await parse(original, body, { byRow: true });
    expect(expected).toHaveLength(2);
    expect(await parse(lean, body, { byRow: true })).toEqual(expected);
  });

  it('reports a cell the encoder rejects as the result error, as the driver does', async () => {
    // A 3-byte bigint cannot be decoded.
    const body = rowsFrame([COLUMNS[0]], [[Buffer.alloc(3)]]);
    const expected = (await parse(original, body)) as unknown[][];
    const got = (await parse(lean, body)) as unknown[][];
    expect(got[got.length - 1][0]).toBe('error');
    expect(got[got.length - 1]).toEqual(expected[expected.length - 1]);
  });
});
