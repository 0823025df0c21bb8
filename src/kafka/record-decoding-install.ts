/**
 * Installs the faster kafkajs record decoder and Batch (fast-record-decoding.ts) in Node's module cache, each only if it
 * agrees with kafkajs's own on a self-check, and only before kafkajs has bound the originals.
 */
import { isDeepStrictEqual } from 'util';
import {
  fastBatchClass,
  fastRecordDecoder,
  FilterAborted,
  KafkaBatchClass,
  KafkaDecoder,
  PartitionData,
  RecordBatchContext,
  RecordDecoder,
} from './fast-record-decoding';

/** Which replacements are in use. */
export interface RecordDecodingInstall {
  recordDecoder: boolean;
  batch: boolean;
}

const RECORD_DECODER = 'kafkajs/src/protocol/recordBatch/record/v0/decoder';
const BATCH = 'kafkajs/src/consumer/batch';
/** The modules that bind each of them when they load: once loaded, replacing the cache entry is too late. */
const RECORD_DECODER_USERS = ['kafkajs/src/protocol/recordBatch/v0/decoder'];
const BATCH_USERS = ['kafkajs/src/consumer/consumerGroup'];

/** kafkajs's record v0 encoder: a record with its length prefix. */
type RecordEncoder = (r: { timestampDelta: number; offsetDelta: number; key: Buffer | null; value: Buffer | null; headers?: object }) => {
  buffer: Buffer;
};

/** Whether `fast` decodes sample records (with and without headers, edges of the fast path) exactly as `original`. */
function recordDecoderAgrees(
  Decoder: new (b: Buffer) => KafkaDecoder,
  encode: RecordEncoder,
  original: RecordDecoder,
  fast: RecordDecoder,
): boolean {
  const contexts: RecordBatchContext[] = [
    { firstOffset: '0', firstTimestamp: '1700000000000', magicByte: 2, timestampType: 0, maxTimestamp: '1700000000009' },
    { firstOffset: '9007199254740990', firstTimestamp: '-1', magicByte: 2, isControlBatch: true, timestampType: 0 },
    { firstOffset: '42', firstTimestamp: '5', magicByte: 2, timestampType: 1, maxTimestamp: '77' },
    { firstOffset: '123456789012345678', firstTimestamp: '9007199254740000', magicByte: 2, timestampType: 0 },
  ];
  // Record bodies as kafkajs's batch decoder hands them over: kafkajs's own encoding, length prefix cut.
  const records = [
    { timestampDelta: 0, offsetDelta: 0, key: Buffer.from('k'), value: Buffer.from('{"a":1}') },
    { timestampDelta: -3, offsetDelta: 7, key: null, value: null },
    { timestampDelta: 2 ** 48, offsetDelta: 1, key: Buffer.alloc(0), value: Buffer.from('v') },
    { timestampDelta: 1000, offsetDelta: 2, key: Buffer.from('k'), value: Buffer.from('v'), headers: { h: ['x', 'y'] } },
    { timestampDelta: 5000, offsetDelta: 2 ** 30, key: Buffer.from('k2'), value: Buffer.from('v2') },
  ].map((r) => new Decoder(encode(r).buffer).readVarIntBytes() as Buffer);
  for (const ctx of contexts) {
    for (const r of records) {
      const a = new Decoder(r);
      const b = new Decoder(r);
      if (!isDeepStrictEqual(original(a, ctx), fast(b, ctx)) || a.offset !== b.offset) return false;
    }
  }
  return true;
}

/** Whether FastBatch builds the same message lists as kafkajs's Batch (offsets below the fetched one, control records). */
function batchAgrees(Batch: KafkaBatchClass, Fast: KafkaBatchClass): boolean {
  const msg = (offset: unknown, isControlRecord = false) => ({ offset, isControlRecord, key: Buffer.from('k'), batchContext: {} });
  const cases: Array<[unknown, PartitionData]> = [
    ['10', { partition: 0, highWatermark: '20', messages: [msg('8'), msg('9'), msg('10'), msg('11', true), msg('100')] }],
    ['9', { partition: 1, highWatermark: '20', messages: [msg('10'), msg('99'), msg('100')] }],
    [10, { partition: 2, highWatermark: '20', messages: [msg('9'), msg('10')] }],
    ['0', { partition: 3, highWatermark: '0', messages: [] }],
  ];
  for (const [fetched, data] of cases) {
    const a = new Batch('t', fetched, data);
    const b = new Fast('t', fetched, data);
    const ids = (xs: unknown[]) => xs.map((m) => data.messages.indexOf(m as never)).join(',');
    for (const k of Object.keys(a) as Array<keyof typeof a>) {
      const x = a[k];
      const y = b[k];
      if (Array.isArray(x) ? !Array.isArray(y) || ids(x) !== ids(y) : x !== y) return false;
    }
    if (Object.keys(a).join() !== Object.keys(b).join()) return false;
  }
  return true;
}

/** Replaces module `id` in Node's module cache with `make(original)` if `check` passes and no user has bound it yet. */
function replace<T>(id: string, users: string[], make: (original: T) => T, check: (original: T, fast: T) => boolean): boolean {
  if (users.some((u) => require.cache[require.resolve(u)] !== undefined)) return false;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const original = require(id) as T;
  const entry = require.cache[require.resolve(id)];
  if (entry === undefined || entry.exports !== original) return false;
  const fast = make(original);
  if (!check(original, fast)) return false;
  entry.exports = fast;
  return true;
}

let installed: RecordDecodingInstall | undefined;

/** Installs both replacements once (before kafkajs loads); returns which are in use. */
export function installFastRecordDecoding(): RecordDecodingInstall {
  if (installed !== undefined) return installed;
  installed = { recordDecoder: false, batch: false };
  // The escape hatch (and the bench's A/B switch): ADJUNCT_KAFKAJS_DECODING=kafkajs keeps kafkajs's own decoding.
  if (process.env.ADJUNCT_KAFKAJS_DECODING === 'kafkajs') return installed;
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => KafkaDecoder;
    const filterAborted = require('kafkajs/src/consumer/filterAbortedMessages') as FilterAborted;
    const encode = require('kafkajs/src/protocol/recordBatch/record/v0') as RecordEncoder;
    /* eslint-enable @typescript-eslint/no-require-imports */
    installed.recordDecoder = replace<RecordDecoder>(RECORD_DECODER, RECORD_DECODER_USERS, fastRecordDecoder, (o, f) =>
      recordDecoderAgrees(Decoder, encode, o, f),
    );
    installed.batch = replace<KafkaBatchClass>(BATCH, BATCH_USERS, (B) => fastBatchClass(B, filterAborted), batchAgrees);
  } catch {
    // A kafkajs without these modules keeps its own decoding.
  }
  return installed;
}
