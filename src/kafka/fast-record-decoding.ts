/**
 * Faster kafkajs record decoding (kafkajs 2.2.4 is pinned and no longer maintained). For every record kafkajs parses
 * its batch's first offset and first timestamp from decimal strings into BigInt-backed `Long`s, adds the deltas and
 * prints them back (six BigInt operations and four `Long`s), and its consumer `Batch` parses every record's offset once
 * more to compare it with the fetched offset: ≈ 8% of the worker's allocations per record and the BigInt parses in the
 * bench CPU profile. The replacements compute the same strings with plain numbers when every value is a safe integer,
 * and compare canonical offset strings without parsing them; anything else (headers, varlongs over 7 bytes, values past
 * 2^53, non-string offsets) goes to kafkajs's own code. Each is installed only if it agrees with the original on a
 * self-check, so a kafkajs change can never make records decode differently.
 *
 * kafkajs binds both modules at load time, so they are replaced in Node's module cache before kafkajs loads:
 * `src/kafka/preload.ts`, imported first by the CLI and the bench child, installs them (the worker's Kafka client
 * factory installs what is still unbound, never the library API).
 */
import { readSmallVarLong } from './fast-varlong';

/** kafkajs's protocol Decoder: only what the record decoder uses. */
export interface KafkaDecoder {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readVarInt(): number;
  readVarIntBytes(): Buffer | null;
}

/** The record batch context kafkajs hands its record decoder (strings are int64 decimals). */
export interface RecordBatchContext {
  firstOffset?: string;
  firstTimestamp?: string;
  magicByte?: number;
  isControlBatch?: boolean;
  timestampType?: number;
  maxTimestamp?: string;
}

/** kafkajs's record v0 decoder: `(decoder, batchContext) → record`. */
export type RecordDecoder = (decoder: KafkaDecoder, batchContext?: RecordBatchContext) => Record<string, unknown>;

/** kafkajs TimestampTypes.LOG_APPEND_TIME. */
const LOG_APPEND_TIME = 1;
/** `s` as a number when it is the canonical decimal of a safe integer, else undefined. */
function safeInteger(s: string | undefined): number | undefined {
  if (typeof s !== 'string') return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) && String(n) === s ? n : undefined;
}

/**
 * The headers of every record without headers: one frozen empty object rather than one per record (kafkajs builds a
 * fresh `{}`); nothing in the worker writes to a record's headers, and an extractor that tried would fail loudly.
 */
const NO_HEADERS: Record<string, never> = Object.freeze({});

/** The replacement for kafkajs's record decoder `original`. */
export function fastRecordDecoder(original: RecordDecoder): RecordDecoder {
  // The batch context of the previous record and its bases as numbers: every record of a batch shares them.
  let lastContext: RecordBatchContext | undefined;
  let offsetBase: number | undefined;
  let timestampBase: number | undefined;
  /** The record at the decoder's position, or undefined when it needs kafkajs's own decoder (position then unspecified). */
  function decodeFast(decoder: KafkaDecoder, batchContext: RecordBatchContext): Record<string, unknown> | undefined {
    const { magicByte, isControlBatch = false, timestampType, maxTimestamp } = batchContext;
    const logAppend = timestampType === LOG_APPEND_TIME && maxTimestamp;
    if (offsetBase === undefined || (!logAppend && timestampBase === undefined)) return undefined;
    const attributes = decoder.readInt8();
    const timestampDelta = readSmallVarLong(decoder);
    if (timestampDelta === undefined) return undefined;
    let timestamp: string | undefined = logAppend ? maxTimestamp : undefined;
    if (timestamp === undefined) {
      const t = (timestampBase as number) + timestampDelta;
      if (!Number.isSafeInteger(t)) return undefined;
      timestamp = String(t);
    }
    const o = offsetBase + decoder.readVarInt();
    if (!Number.isSafeInteger(o)) return undefined;
    const key = decoder.readVarIntBytes();
    const value = decoder.readVarIntBytes();
    const headerCount = decoder.readVarInt();
    if (headerCount !== 0 && headerCount !== -1) return undefined;
    return {
      magicByte,
      attributes,
      timestamp,
      offset: String(o),
      key,
      value,
      headers: NO_HEADERS,
      isControlRecord: isControlBatch,
      batchContext,
    };
  }
  return function decodeRecord(decoder: KafkaDecoder, batchContext: RecordBatchContext = {}): Record<string, unknown> {
    if (batchContext !== lastContext) {
      lastContext = batchContext;
      offsetBase = safeInteger(batchContext.firstOffset);
      timestampBase = safeInteger(batchContext.firstTimestamp);
    }
    const start = decoder.offset;
    const record = decodeFast(decoder, batchContext);
    if (record !== undefined) return record;
    decoder.offset = start;
    return original(decoder, batchContext);
  };
}

/** kafkajs's consumer Batch: only what the replacement uses. */
export interface KafkaBatch {
  fetchedOffset: unknown;
  rawMessages: Array<{ offset: unknown; isControlRecord?: boolean }>;
  messagesWithinOffset: unknown[];
  messages: unknown[];
}
/** kafkajs's consumer Batch class. */
export type KafkaBatchClass = new (topic: string, fetchedOffset: unknown, partitionData: PartitionData) => KafkaBatch;
/** The fetched partition data a Batch is built from. */
export interface PartitionData {
  partition: number;
  highWatermark?: string;
  abortedTransactions?: unknown;
  messages: Array<{ offset: unknown; isControlRecord?: boolean }>;
  [k: string]: unknown;
}
/** kafkajs's filterAbortedMessages. */
export type FilterAborted = (args: { messages: unknown[]; abortedTransactions?: unknown }) => Array<{ isControlRecord?: boolean }>;

/** Whether `s` is a canonical non-negative decimal (what Long.toString prints for an offset): digits, no leading 0. */
function canonicalOffset(s: unknown): s is string {
  if (typeof s !== 'string' || s.length === 0 || (s.length > 1 && s.charCodeAt(0) === 48)) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** a ≥ b for canonical non-negative decimals. */
function offsetAtLeast(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a >= b;
}

/** A subclass of kafkajs's Batch that filters offsets below the fetched one by string comparison. */
export function fastBatchClass(Batch: KafkaBatchClass, filterAbortedMessages: FilterAborted): KafkaBatchClass {
  return class FastBatch extends Batch {
    constructor(topic: string, fetchedOffset: unknown, partitionData: PartitionData) {
      const messages = partitionData.messages;
      const fast = canonicalOffset(fetchedOffset) && messages.every((m) => canonicalOffset(m.offset));
      if (!fast) {
        super(topic, fetchedOffset, partitionData);
        return;
      }
      // kafkajs's constructor on no messages sets every other field; the message lists follow its own steps.
      super(topic, fetchedOffset, { ...partitionData, messages: [] });
      this.rawMessages = messages;
      this.messagesWithinOffset = messages.filter((m) => offsetAtLeast(m.offset as string, fetchedOffset));
      this.messages = filterAbortedMessages({
        messages: this.messagesWithinOffset,
        abortedTransactions: partitionData.abortedTransactions,
      }).filter((m) => !m.isControlRecord);
    }
  };
}
