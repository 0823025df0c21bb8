/**
 * A leaner cassandra-driver BATCH request body (cassandra-driver 4.8.0 is pinned). The driver's `BatchRequest.write`
 * makes two closures per statement and calls the encoder for every bind value, and a bigint given as a number becomes
 * a `Long` and an 8-byte Buffer first. The replacement writes the same body (protocol v2+: `<type><n><query>...
 * <consistency>[<flags>[<serial consistency>][<timestamp>][<keyspace>]]`) in one loop: a Buffer or null is written as it
 * is (the encoder returns those unchanged), a safe-integer number bound to a bigint column is written in place, and
 * anything else goes through the driver's encoder. With the lean frame writer (fast-frame-writer) a batch of the sink's
 * rows then allocates nothing per bind value. It is installed only with the lean frame writer, and only if it writes
 * exactly what the driver writes on a self-check, so a driver change can never alter a frame.
 */
import { types } from 'cassandra-driver';
import { installLeanFrameWriter } from './fast-frame-writer';

/** The frame writer calls the body needs (the driver's FrameWriter, lean or not). */
interface BodyWriter {
  bodyLength: number;
  writeByte(n: number): void;
  writeShort(n: number): void;
  writeInt(n: number): void;
  writeLong(n: unknown): void;
  writeBytes(b: unknown): void;
  writeShortBytes(b: Buffer): void;
  writeString(s: string): void;
  writeLString(s: string): void;
  writeCustomPayload(p: unknown): void;
  write(version: number, streamId: number, flags?: number): Buffer;
}

/** The execution options a batch request reads. */
interface BatchOptions {
  isQueryTracing(): boolean;
  getCustomPayload(): unknown;
  getConsistency(): number;
  getSerialConsistency(): number | undefined;
  getOrGenerateTimestamp(): unknown;
  getKeyspace(): string | undefined;
}

/** A column type as prepared metadata or a hint gives it. */
type TypeInfo = { code: number } | string | number | null | undefined;

/** One statement of a batch as the driver hands it to the request (prepared: queryId and meta). */
interface BatchItem {
  query?: string;
  queryId?: Buffer;
  meta?: { columns: { type: TypeInfo }[] };
  params?: unknown[] | null;
}

/** The driver's BatchRequest instance: what write reads and sets. */
interface BatchRequestLike {
  queries: BatchItem[];
  options: BatchOptions;
  hints: (TypeInfo[] | undefined)[];
  type: number;
  length?: number;
}

/** The driver's Encoder: its protocol version, encoding options and encode. */
interface EncoderLike {
  protocolVersion: number;
  encodingOptions?: { useBigIntAsLong?: boolean };
  encode(value: unknown, type: TypeInfo): unknown;
}

/** The driver's protocol version checks the body depends on. */
interface ProtocolChecks {
  supportsTimestamp(version: number): boolean;
  supportsKeyspaceInRequest(version: number): boolean;
  uses4BytesQueryFlags(version: number): boolean;
}

type BatchWrite = (this: BatchRequestLike, encoder: EncoderLike, streamId: number) => Buffer;

const BATCH_OPCODE = 0x0d;
const TRACING_FLAG = 0x02;
const CUSTOM_PAYLOAD_FLAG = 0x04;
const WITH_SERIAL_CONSISTENCY = 0x10;
const WITH_DEFAULT_TIMESTAMP = 0x20;
const WITH_KEYSPACE = 0x80;
const BIGINT = types.dataTypes.bigint;
const TWO_32 = 0x100000000;
const NO_PARAMS: readonly unknown[] = [];

/** The replacement for BatchRequest.prototype.write, writing through the driver's FrameWriter class. */
export function leanBatchWrite(FrameWriter: new (opcode: number) => BodyWriter): BatchWrite {
  const pv = types.protocolVersion as unknown as ProtocolChecks;
  return function write(this: BatchRequestLike, encoder: EncoderLike, streamId: number): Buffer {
    const queries = this.queries;
    if (!queries || !(queries.length > 0)) throw new TypeError(`Invalid queries provided ${String(queries)}`);
    const o = this.options;
    const w = new FrameWriter(BATCH_OPCODE);
    let headerFlags = o.isQueryTracing() ? TRACING_FLAG : 0;
    const payload = o.getCustomPayload();
    if (payload) {
      headerFlags |= CUSTOM_PAYLOAD_FLAG;
      w.writeCustomPayload(payload);
    }
    w.writeByte(this.type);
    w.writeShort(queries.length);
    // A number for a bigint is written in place unless the encoder wants BigInts there (it refuses numbers then).
    const numbersAsBigint = encoder.encodingOptions?.useBigIntAsLong !== true;
    for (let i = 0; i < queries.length; i++) writeStatement(w, encoder, queries[i], this.hints[i], numbersAsBigint);
    w.writeShort(o.getConsistency());
    const version = encoder.protocolVersion;
    if (pv.supportsTimestamp(version)) {
      const serial = o.getSerialConsistency();
      const timestamp = o.getOrGenerateTimestamp();
      const keyspace = o.getKeyspace();
      let flags = serial ? WITH_SERIAL_CONSISTENCY : 0;
      if (timestamp !== null && timestamp !== undefined) flags |= WITH_DEFAULT_TIMESTAMP;
      if (keyspace && pv.supportsKeyspaceInRequest(version)) flags |= WITH_KEYSPACE;
      if (pv.uses4BytesQueryFlags(version)) w.writeInt(flags);
      else w.writeByte(flags);
      if (flags & WITH_SERIAL_CONSISTENCY) w.writeShort(serial as number);
      if (flags & WITH_DEFAULT_TIMESTAMP) w.writeLong(timestamp);
      if (flags & WITH_KEYSPACE) w.writeString(keyspace as string);
    }
    this.length = w.bodyLength;
    return w.write(version, streamId, headerFlags);
  };
}

/** One statement: prepared (id) or not (query text), then its bind values. */
function writeStatement(
  w: BodyWriter,
  encoder: EncoderLike,
  item: BatchItem,
  hints: TypeInfo[] | undefined,
  numbersAsBigint: boolean,
): void {
  const params = item.params || NO_PARAMS;
  const columns = item.queryId ? item.meta!.columns : undefined;
  if (columns !== undefined) {
    w.writeByte(1);
    w.writeShortBytes(item.queryId!);
  } else {
    w.writeByte(0);
    w.writeLString(item.query as string);
  }
  w.writeShort(params.length);
  for (let j = 0; j < params.length; j++) {
    const p = params[j];
    if (p === null || p instanceof Buffer) {
      w.writeBytes(p);
      continue;
    }
    const type = columns !== undefined ? columns[j].type : hints ? hints[j] : null;
    if (numbersAsBigint && typeof p === 'number' && Number.isSafeInteger(p) && isBigint(type)) {
      const high = Math.floor(p / TWO_32);
      w.writeInt(8);
      w.writeInt(high);
      w.writeInt((p - high * TWO_32) | 0);
    } else w.writeBytes(encoder.encode(p, type));
  }
}

/** Whether prepared metadata says bigint (hints given as names or codes take the encoder's path). */
function isBigint(type: TypeInfo): boolean {
  return typeof type === 'object' && type !== null && type.code === BIGINT;
}

/** Requests the self-check writes both ways: prepared, unprepared with hints, every flag, several protocol versions. */
function samples(): { version: number; queries: BatchItem[]; hints?: (TypeInfo[] | undefined)[]; options: Record<string, unknown> }[] {
  const bigint = { code: BIGINT };
  const blob = { code: types.dataTypes.blob };
  const text = { code: types.dataTypes.text };
  const meta = { columns: [{ type: blob }, { type: bigint }, { type: bigint }, { type: blob }, { type: text }] };
  const id = Buffer.from('0123456789abcdef');
  const row = (t: number, value: unknown): BatchItem => ({
    query: 'INSERT',
    queryId: id,
    meta,
    params: [Buffer.from('k'), t, 2 ** 40 + t, value, 'w'],
  });
  const ts = types.Long.fromNumber(1_796_103_975_183_000);
  return [
    {
      version: 4,
      queries: [row(-1, Buffer.from('v')), row(2 ** 53 - 1, null), row(-(2 ** 53) + 1, types.unset), row(0, undefined)],
      options: { getConsistency: 6, getOrGenerateTimestamp: ts },
    },
    {
      version: 4,
      queries: [{ ...row(5, null), params: [Buffer.from('k'), Number.NEGATIVE_INFINITY, types.Long.fromNumber(-3), Buffer.alloc(0), 'é'] }],
      options: {
        getConsistency: 1,
        getSerialConsistency: 9,
        getOrGenerateTimestamp: null,
        isQueryTracing: true,
        getCustomPayload: { a: Buffer.from('b') },
      },
    },
    {
      version: 3,
      queries: [
        { query: 'UPDATE t SET a = ?', params: [7, 'x'] },
        { query: 'DELETE', params: null },
      ],
      hints: [['bigint', 'text'], undefined],
      options: { getConsistency: 4, getOrGenerateTimestamp: ts, getKeyspace: 'ks' },
    },
    { version: 2, queries: [row(1, Buffer.from('v'))], options: { getConsistency: 4 } },
    { version: 0x42, queries: [row(9, Buffer.from('v'))], options: { getConsistency: 4, getKeyspace: 'ks', getOrGenerateTimestamp: ts } },
  ];
}

/** Stub execution options answering `values` (other getters: false for is*, else undefined). */
function stubOptions(values: Record<string, unknown>): BatchOptions {
  return new Proxy(
    {},
    { get: (_t, k: string) => () => (k in values ? values[k] : k.startsWith('is') ? false : undefined) },
  ) as BatchOptions;
}

/** Whether `lean` writes every sample exactly as `original` (frame bytes and recorded body length). */
function agrees(original: BatchWrite, lean: BatchWrite, Encoder: new (version: number, options: object) => EncoderLike): boolean {
  for (const s of samples()) {
    const encoder = new Encoder(s.version, {});
    const request = (): BatchRequestLike => ({ queries: s.queries, options: stubOptions(s.options), hints: s.hints ?? [], type: 1 });
    const a = request();
    const b = request();
    if (!original.call(a, encoder, 3).equals(lean.call(b, encoder, 3)) || a.length !== b.length) return false;
  }
  return true;
}

let installed: boolean | undefined;

/** Installs the lean batch body on cassandra-driver's BatchRequest once (with the lean frame writer); returns whether it is in use. */
export function installLeanBatchRequest(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  try {
    if (!installLeanFrameWriter()) return false;
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { BatchRequest } = require('cassandra-driver/lib/requests') as { BatchRequest: { prototype: { write: BatchWrite } } };
    const { FrameWriter } = require('cassandra-driver/lib/writers') as { FrameWriter: new (opcode: number) => BodyWriter };
    const Encoder = require('cassandra-driver/lib/encoder') as new (version: number, options: object) => EncoderLike;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const original = BatchRequest?.prototype?.write;
    if (typeof original !== 'function') return false;
    const lean = leanBatchWrite(FrameWriter);
    if (!agrees(original, lean, Encoder)) return false;
    BatchRequest.prototype.write = lean;
    installed = true;
  } catch {
    // A driver without these modules keeps its own request body.
  }
  return installed;
}

/** Whether the lean batch body is in use (installed by the worker's and CLI's client factory, never by the library API). */
export function leanBatchRequestInstalled(): boolean {
  return installed === true;
}
