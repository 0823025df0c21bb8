/**
 * A leaner cassandra-driver request writer (cassandra-driver 4.8.0 is pinned). The driver's `FrameWriter` allocates a
 * Buffer for every int, short and byte of a request (each bind value's length, each statement's kind, id and value
 * count) and concatenates them at the end: about 600 B per row of a batch, the worker's largest allocation site
 * (bench heap profile). The replacement writes the same bytes into one growing Buffer per request, with room for the
 * frame header in front, so a request costs a few allocations instead of about eight per row. It is installed only if
 * it writes exactly what the driver's own methods write on a self-check, so a driver change can never alter a frame.
 */

/** The driver's FrameWriter instance: the fields its constructor sets, plus the patch's buffer. */
interface FrameWriterLike {
  buffers: Buffer[];
  opcode: number;
  bodyLength: number;
  /** The patch's buffer: header room, then the body written so far. */
  leanBuf?: Buffer;
  add(buf: Buffer): void;
  writeShort(num: number): void;
  writeInt(num: number): void;
  writeByte(num: number): void;
  writeBytes(bytes: Buffer | null): void;
  writeShortBytes(bytes: Buffer | null): void;
  writeString(str: string): void;
  writeLString(str: string): void;
  write(version: number, streamId: number, flags?: number): Buffer;
}

interface FrameWriterClass {
  new (opcode: number): FrameWriterLike;
  prototype: FrameWriterLike;
}

/** The driver's frame header constructor (types.FrameHeader). */
interface FrameHeaderClass {
  new (version: number, flags: number, streamId: number, opcode: number, bodyLength: number): { toBuffer(): Buffer };
}

/** The methods the patch replaces, in the shape it assigns them. */
type LeanMethods = Pick<FrameWriterLike, 'add' | 'writeShort' | 'writeInt' | 'writeByte' | 'write'>;

/** Bytes kept in front of the body for the frame header (9 from protocol v3 on, 8 before). */
const HEADER_ROOM = 9;
/** First buffer size of a request (pooled by Node below 4 KiB); it grows ×4 when full. */
const FIRST_BYTES = 2048;

/**
 * Per opcode, the buffer size the last request of that kind needed (+1/8): a request starts at that size, so a run of
 * similar requests (the sink's batches) allocates one buffer each instead of a first one and its ×4 growth.
 */
const sizeHints: number[] = [];

/** The buffer of `w`, grown when needed so that `n` more body bytes fit after its header room and body. */
function reserve(w: FrameWriterLike, n: number): Buffer {
  const end = HEADER_ROOM + w.bodyLength;
  let buf = w.leanBuf;
  if (buf === undefined) {
    buf = Buffer.allocUnsafe(Math.max(FIRST_BYTES, end + n, sizeHints[w.opcode] ?? 0));
    w.leanBuf = buf;
  } else if (end + n > buf.length) {
    const grown = Buffer.allocUnsafe(Math.max(end + n, buf.length * 4));
    buf.copy(grown, 0, 0, end);
    buf = grown;
    w.leanBuf = grown;
  }
  return buf;
}

/** The replacement methods; `FrameHeader` is the driver's, so the header bytes are its own. */
export function leanFrameWriterMethods(FrameHeader: FrameHeaderClass): LeanMethods {
  return {
    add(this: FrameWriterLike, src: Buffer): void {
      // set() takes any Uint8Array, as the driver's Buffer.concat does.
      reserve(this, src.length).set(src, HEADER_ROOM + this.bodyLength);
      this.bodyLength += src.length;
    },
    writeShort(this: FrameWriterLike, num: number): void {
      // The same Buffer method as the driver's, so an out-of-range value throws alike.
      reserve(this, 2).writeUInt16BE(num, HEADER_ROOM + this.bodyLength);
      this.bodyLength += 2;
    },
    writeInt(this: FrameWriterLike, num: number): void {
      reserve(this, 4).writeInt32BE(num, HEADER_ROOM + this.bodyLength);
      this.bodyLength += 4;
    },
    writeByte(this: FrameWriterLike, num: number): void {
      // The driver writes Buffer.from([num]): the same uint8 conversion as an indexed store.
      reserve(this, 1)[HEADER_ROOM + this.bodyLength] = num;
      this.bodyLength += 1;
    },
    write(this: FrameWriterLike, version: number, streamId: number, flags?: number): Buffer {
      const header = new FrameHeader(version, flags || 0, streamId, this.opcode, this.bodyLength).toBuffer();
      const buf = reserve(this, 0);
      const used = HEADER_ROOM + this.bodyLength;
      sizeHints[this.opcode] = used + (used >> 3);
      const start = HEADER_ROOM - header.length;
      buf.set(header, start);
      return buf.subarray(start, HEADER_ROOM + this.bodyLength);
    },
  };
}

/** One request's worth of writer calls, for the self-check. */
type Ops = (w: FrameWriterLike) => void;

/** Write sequences the self-check runs through both writers: every replaced method, nulls, growth past the first buffer. */
function samples(): { opcode: number; ops: Ops; version: number; flags: number }[] {
  const big = Buffer.alloc(3 * FIRST_BYTES + 17, 0xab);
  return [
    { opcode: 0x0d, version: 4, flags: 0, ops: (w) => (w.writeByte(1), w.writeShort(2), w.writeShortBytes(Buffer.from([1, 2, 3]))) },
    {
      opcode: 0x0a,
      version: 4,
      flags: 2,
      ops: (w) => {
        w.writeShortBytes(Buffer.from('0123456789abcdef'));
        w.writeShort(4);
        w.writeBytes(Buffer.from('key'));
        w.writeBytes(null);
        w.writeBytes(Buffer.alloc(0));
        w.writeInt(-2);
        w.writeString('writer-é');
        w.writeLString('SELECT * FROM t');
        w.writeByte(300);
      },
    },
    { opcode: 0x07, version: 2, flags: 0, ops: (w) => (w.writeBytes(big), w.writeShort(65535), w.writeBytes(big)) },
    { opcode: 0x05, version: 4, flags: 0, ops: () => undefined },
  ];
}

/** Whether the lean methods write every sample exactly as the driver's (frame bytes and body length). */
function agrees(FrameWriter: FrameWriterClass, lean: LeanMethods): boolean {
  class Lean extends FrameWriter {}
  Object.assign(Lean.prototype, lean);
  for (const s of samples()) {
    const a = new FrameWriter(s.opcode);
    const b = new Lean(s.opcode);
    s.ops(a);
    s.ops(b);
    if (a.bodyLength !== b.bodyLength) return false;
    if (!a.write(s.version, 3, s.flags).equals(b.write(s.version, 3, s.flags))) return false;
  }
  return true;
}

let installed: boolean | undefined;

/** Installs the lean request writer on cassandra-driver's FrameWriter once; returns whether it is in use. */
export function installLeanFrameWriter(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { FrameWriter } = require('cassandra-driver/lib/writers') as { FrameWriter: FrameWriterClass };
    const { FrameHeader } = require('cassandra-driver/lib/types') as { FrameHeader: FrameHeaderClass };
    /* eslint-enable @typescript-eslint/no-require-imports */
    const lean = leanFrameWriterMethods(FrameHeader);
    if (typeof FrameWriter !== 'function' || typeof FrameHeader !== 'function' || !agrees(FrameWriter, lean)) return false;
    Object.assign(FrameWriter.prototype, lean);
    installed = true;
  } catch {
    // A driver without these modules keeps its own writer.
  }
  return installed;
}
