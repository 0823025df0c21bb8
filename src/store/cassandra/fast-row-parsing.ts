/**
 * Leaner parsing of cassandra-driver's ROWS results (cassandra-driver 4.8.0 is pinned). The driver's `Parser` pushes
 * every row of a result through its object stream to the `ResultEmitter`, one stream item per row, and the emitter
 * collects them again in a per-stream-id dictionary until the last one arrives. For a point read that is most of the
 * response's parsing cost: an as-of get reads two rows, and each row's trip through two streams costs about as much
 * as decoding it (lookup probe CPU profile, 300k-record tables: 8.1 µs to parse an answer of two rows of four columns,
 * 3.9 µs for one row of two).
 *
 * The replacement decodes every row of a fully buffered result (not one streamed row by row: `eachRow`, `stream`)
 * into the same `Row` objects, then pushes the whole result as one item, the shape the driver itself pushes for a
 * result without rows. It is installed only if it yields exactly what the driver's own method yields on a self-check.
 * `ADJUNCT_CASSANDRA_ROW_PARSING=driver` keeps the driver's parsing.
 */

/** A column of a result's metadata, as the driver reads it. */
interface ColumnMeta {
  name: string;
  type: { code: number; info?: unknown };
}

/** The driver's FrameReader: the methods the parser uses. */
interface FrameReaderLike {
  readInt(): number;
  readBytes(): Buffer | null;
}

/** The driver's per-frame parsing state (the fields the patch reads or sets). */
interface FrameInfo {
  header: unknown;
  meta?: { columns?: ColumnMeta[]; continuousPageIndex?: number };
  flagsInfo?: unknown;
  byRow?: boolean;
  isStreaming?: boolean;
  parsingError?: boolean;
  rowLength?: number;
}

/** The driver's Parser: the members the patch uses. */
interface ParserLike {
  encoder: { decode(buf: Buffer | null, type: ColumnMeta['type']): unknown };
  push(item: unknown): boolean;
  handleParsingError(e: unknown, frameInfo: FrameInfo, reader: FrameReaderLike | null, offset?: number, row?: number): void;
  parseRows(frameInfo: FrameInfo, reader: FrameReaderLike): void;
}

type RowClass = new (columns: ColumnMeta[]) => Record<string, unknown>;

/** The lean parseRows, falling back to the driver's for streamed frames and anything it does not handle. */
export function leanParseRows(original: ParserLike['parseRows'], Row: RowClass): ParserLike['parseRows'] {
  return function parseRows(this: ParserLike, frameInfo: FrameInfo, reader: FrameReaderLike): void {
    const meta = frameInfo.meta;
    const columns = meta?.columns;
    // Streamed rows, a resumed frame, a result without metadata (SKIP_METADATA) and DSE's continuous pages: the driver's.
    const driverOwn = frameInfo.isStreaming || frameInfo.byRow || frameInfo.parsingError || frameInfo.rowLength !== undefined;
    if (driverOwn || columns === undefined || meta?.continuousPageIndex !== undefined) return original.call(this, frameInfo, reader);
    let count: number;
    try {
      count = reader.readInt();
    } catch (e) {
      return this.handleParsingError(e, frameInfo, reader);
    }
    frameInfo.rowLength = count;
    const rows: Record<string, unknown>[] = new Array(count);
    try {
      for (let i = 0; i < count; i++) {
        const row = new Row(columns);
        for (let j = 0; j < columns.length; j++) {
          const c = columns[j];
          row[c.name] = this.encoder.decode(reader.readBytes(), c.type);
        }
        rows[i] = row;
      }
    } catch (e) {
      // The body is fully buffered here, so this is a malformed frame or a value the encoder rejects, as for the driver.
      return this.handleParsingError(e, frameInfo, null);
    }
    this.push({ header: frameInfo.header, result: { rows, meta: frameInfo.meta, flags: frameInfo.flagsInfo } });
  };
}

/** A ROWS body after its metadata: the row count, then each cell as [int length][bytes]. */
function rowsBody(cells: (Buffer | null)[][]): Buffer {
  const parts: Buffer[] = [];
  const int = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  };
  parts.push(int(cells.length));
  for (const row of cells) for (const cell of row) parts.push(int(cell === null ? -1 : cell.length), ...(cell === null ? [] : [cell]));
  return Buffer.concat(parts);
}

/** The rows one parse pushed (row by row or as one result), each as its prototype and its [column, value as text] pairs. */
function parsed(
  proto: ParserLike,
  method: ParserLike['parseRows'],
  encoder: ParserLike['encoder'],
  reader: FrameReaderLike,
  info: FrameInfo,
): unknown[] {
  const pushed: unknown[] = [];
  const parser = Object.assign(Object.create(proto) as ParserLike, {
    encoder,
    push: (item: unknown) => pushed.push(item) > 0,
    handleParsingError: () => pushed.push('error'),
  });
  method.call(parser, info, reader);
  const rows: object[] = [];
  for (const item of pushed as { row?: object; result?: { rows: object[] } }[]) {
    if (item.row) rows.push(item.row);
    if (item.result) rows.push(...item.result.rows);
  }
  return rows.map((r) => [
    Object.getPrototypeOf(r),
    Object.entries(r).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('hex') : String(v)]),
  ]);
}

/** True when both parse the same rows: same Row prototype, same columns in the same order, same values. */
function agrees(Parser: { prototype: ParserLike }, lean: ParserLike['parseRows'], deps: DriverParts): boolean {
  const encoder = new deps.Encoder(4, {});
  const types = deps.dataTypes;
  const columns: ColumnMeta[] = [
    { name: 'prev', type: { code: types.bigint } },
    { name: 'valid_from', type: { code: types.bigint } },
    { name: 'value', type: { code: types.blob } },
    { name: 'writer', type: { code: types.varchar } },
  ];
  const long = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(n));
    return b;
  };
  const body = rowsBody([
    [long(-1), long(1_700_000_000_000), Buffer.from('{"a":1}'), Buffer.from('w-0')],
    [long(42), long(43), null, Buffer.from('')],
  ]);
  const header = { opcode: 8, streamId: 3, version: 4, bodyLength: body.length };
  const run = (m: ParserLike['parseRows']) =>
    JSON.stringify(parsed(Parser.prototype, m, encoder, new deps.FrameReader(header, body, 0), { header, meta: { columns } }), (k, v) =>
      typeof v === 'object' && v !== null && !Array.isArray(v) ? String((v as { constructor?: { name?: string } }).constructor?.name) : v,
    );
  const expected = run(Parser.prototype.parseRows);
  return expected === run(lean) && expected.includes('1700000000000') && expected.includes('w-0');
}

/** The cassandra-driver modules the patch and its self-check use. */
interface DriverParts {
  Encoder: new (version: number, options: object) => ParserLike['encoder'];
  FrameReader: new (header: object, body: Buffer, offset: number) => FrameReaderLike;
  dataTypes: Record<string, number>;
}

let installed: boolean | undefined;

/** Installs the lean row parsing on cassandra-driver's Parser once; returns whether it is in use. */
export function installLeanRowParsing(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  if (process.env.ADJUNCT_CASSANDRA_ROW_PARSING === 'driver') return installed;
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { Parser } = require('cassandra-driver/lib/streams') as { Parser: { prototype: ParserLike } };
    const { FrameReader } = require('cassandra-driver/lib/readers') as { FrameReader: DriverParts['FrameReader'] };
    const Encoder = require('cassandra-driver/lib/encoder') as DriverParts['Encoder'];
    const { types } = require('cassandra-driver') as { types: { Row: RowClass; dataTypes: Record<string, number> } };
    /* eslint-enable @typescript-eslint/no-require-imports */
    const original = Parser?.prototype?.parseRows;
    if (typeof original !== 'function' || typeof types.Row !== 'function') return installed;
    const lean = leanParseRows(original, types.Row);
    if (!agrees(Parser, lean, { Encoder, FrameReader, dataTypes: types.dataTypes })) return installed;
    Parser.prototype.parseRows = lean;
    installed = true;
  } catch {
    // A driver without these modules keeps its own parsing.
  }
  return installed;
}
