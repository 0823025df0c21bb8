import { execFileSync } from 'child_process';
import * as path from 'path';
import * as fc from 'fast-check';
import {
  fastBatchClass,
  fastRecordDecoder,
  FilterAborted,
  KafkaBatchClass,
  KafkaDecoder,
  RecordBatchContext,
  RecordDecoder,
} from '../../src/kafka/fast-record-decoding';

/* eslint-disable @typescript-eslint/no-require-imports */
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => KafkaDecoder;
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: Record<string, unknown>) => { buffer: Buffer };
const original = require('kafkajs/src/protocol/recordBatch/record/v0/decoder') as RecordDecoder;
const Batch = require('kafkajs/src/consumer/batch') as KafkaBatchClass;
const filterAborted = require('kafkajs/src/consumer/filterAbortedMessages') as FilterAborted;
/* eslint-enable @typescript-eslint/no-require-imports */

/** A record body as kafkajs's batch decoder hands it to the record decoder (kafkajs's own encoder, length prefix cut). */
function body(r: Record<string, unknown>): Buffer {
  return new Decoder(Record(r).buffer).readVarIntBytes() as Buffer;
}

/** Decodes with fn; the record and how far the decoder moved. */
function decodeWith(fn: RecordDecoder, b: Buffer, ctx: RecordBatchContext): { record: unknown; offset: number } {
  const d = new Decoder(b);
  return { record: fn(d, ctx), offset: d.offset };
}

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
const nearSafe = fc.bigInt({ min: 2n ** 53n - 5000n, max: 2n ** 53n + 5000n }).map(String);
const context: fc.Arbitrary<RecordBatchContext> = fc.record({
  firstOffset: fc.oneof(fc.nat().map(String), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String), nearSafe),
  firstTimestamp: fc.oneof(fc.constant('-1'), fc.integer({ min: 0, max: 2 ** 45 }).map(String), int64, nearSafe),
  magicByte: fc.constant(2),
  isControlBatch: fc.boolean(),
  timestampType: fc.constantFrom(0, 1),
  maxTimestamp: fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 2 ** 45 }).map(String)),
});
const bytes = fc.oneof(
  fc.constant(null),
  fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
);
const record = fc.record({
  timestampDelta: fc.oneof(
    fc.integer({ min: -1000, max: 1000 }),
    fc.integer({ min: -(2 ** 48), max: 2 ** 48 }),
    fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }),
  ),
  offsetDelta: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  key: bytes,
  value: bytes,
  headers: fc.oneof(
    fc.constant({}),
    fc.dictionary(
      fc.constantFrom('a', 'b', '__proto__', 'trace'),
      fc.string({ maxLength: 5 }).map((s) => Buffer.from(s)),
    ),
  ),
});

describe('fastRecordDecoder', () => {
  const fast = fastRecordDecoder(original);

  it('decodes every record exactly as kafkajs does, leaving the decoder at the same position', () => {
    fc.assert(
      fc.property(context, fc.array(record, { minLength: 1, maxLength: 4 }), (ctx, records) => {
        for (const r of records) {
          const b = body(r);
          expect(decodeWith(fast, b, ctx)).toEqual(decodeWith(original, b, ctx));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('computes offsets and timestamps with numbers, keeping the batch context by identity', () => {
    const ctx: RecordBatchContext = { firstOffset: '1000', firstTimestamp: '1700000000000', magicByte: 2, timestampType: 0 };
    const r = fast(new Decoder(body({ timestampDelta: -7, offsetDelta: 5, key: Buffer.from('k'), value: null })), ctx);
    expect(r).toMatchObject({ offset: '1005', timestamp: '1699999999993', key: Buffer.from('k'), value: null, headers: {} });
    expect(r.batchContext).toBe(ctx);
  });

  it('hands records with headers, and offsets past 2^53, to kafkajs (same result)', () => {
    const calls: number[] = [];
    const counting: RecordDecoder = (d, c) => (calls.push(d.offset), original(d, c));
    const f = fastRecordDecoder(counting);
    const withHeaders = body({ timestampDelta: 1, offsetDelta: 1, key: null, value: null, headers: { h: Buffer.from('x') } });
    const ctx = { firstOffset: '5', firstTimestamp: '10', magicByte: 2, timestampType: 0 };
    expect(f(new Decoder(withHeaders), ctx)).toEqual(original(new Decoder(withHeaders), ctx));
    const big = { ...ctx, firstOffset: '9007199254740993' };
    const plain = body({ timestampDelta: 1, offsetDelta: 1, key: null, value: null });
    expect(f(new Decoder(plain), big)).toEqual(original(new Decoder(plain), big));
    expect(calls).toEqual([0, 0]);
  });
});

describe('fastBatchClass', () => {
  const FastBatch = fastBatchClass(Batch, filterAborted);
  const offsets = fc.oneof(
    fc.nat({ max: 30 }).map(String),
    fc.nat({ max: 2000 }).map(String),
    fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String),
  );

  it('keeps exactly the messages kafkajs keeps (offsets at or past the fetched one, no control records)', () => {
    fc.assert(
      fc.property(fc.oneof(offsets, fc.nat({ max: 30 })), fc.array(fc.tuple(offsets, fc.boolean()), { maxLength: 20 }), (fetched, ms) => {
        const messages = ms.map(([offset, isControlRecord]) => ({ offset, isControlRecord, key: Buffer.from('k'), batchContext: {} }));
        const data = { partition: 3, highWatermark: '99', messages };
        const a = new Batch('t', fetched, data);
        const b = new FastBatch('t', fetched, data);
        expect(Object.keys(b)).toEqual(Object.keys(a));
        expect(b.rawMessages).toBe(messages);
        expect(b.messagesWithinOffset).toEqual(a.messagesWithinOffset);
        expect(b.messages).toEqual(a.messages);
      }),
      { numRuns: 300 },
    );
  });
});

describe('installFastRecordDecoding (in a plain Node process)', () => {
  const root = path.resolve(__dirname, '..', '..');
  const run = (script: string): string =>
    execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, encoding: 'utf8', env: { ...process.env } }).trim();

  it('replaces both modules when the preload comes first (consuming through them: test/integration/kafka)', () => {
    const out = run(`
      require('./src/kafka/preload');
      require('kafkajs');
      const { installFastRecordDecoding } = require('./src/kafka/record-decoding-install');
      console.log(JSON.stringify(installFastRecordDecoding()), require('kafkajs/src/consumer/batch').name);
    `);
    expect(out).toBe('{"recordDecoder":true,"batch":true} FastBatch');
  });

  it('changes nothing once kafkajs has loaded, or when switched off', () => {
    const late = run(`
      require('kafkajs');
      const bound = require.cache[require.resolve('kafkajs/src/protocol/recordBatch/v0/decoder')] !== undefined;
      const { installFastRecordDecoding } = require('./src/kafka/record-decoding-install');
      const r = installFastRecordDecoding();
      console.log(r.batch, r.recordDecoder === !bound, require('kafkajs/src/consumer/batch').name);
    `);
    // kafkajs binds Batch when it loads; the record decoder only with its first fetch response, so that may still be replaced.
    expect(late).toBe('false true Batch');
    const off = execFileSync(
      process.execPath,
      ['--import', 'tsx', '-e', `require('./src/kafka/preload'); console.log(require('kafkajs/src/consumer/batch').name)`],
      {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, ADJUNCT_KAFKAJS_DECODING: 'kafkajs' },
      },
    ).trim();
    expect(off).toBe('Batch');
  });
});
