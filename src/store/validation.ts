import { AdjunctError, InvalidArgumentError } from '../errors';
import { Serde } from './types';

/** Throws InvalidArgumentError unless the key is present (not null/undefined). */
export function requireKey<K>(key: K | null | undefined): K {
  if (key === null || key === undefined) throw new InvalidArgumentError('key must not be null');
  return key;
}

/** Throws InvalidArgumentError unless the timestamp is a non-negative safe integer. */
export function requireTimestamp(timestamp: unknown, what = 'timestamp'): number {
  if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new InvalidArgumentError(`${what} must be a non-negative safe integer, got ${String(timestamp)}`, { [what]: String(timestamp) });
  }
  return timestamp;
}

/** Serialises with the serde, turning any failure into InvalidArgumentError. */
export function serializeWith<T>(serde: Serde<T>, value: T, what: 'key' | 'value'): Buffer {
  let bytes: unknown;
  try {
    bytes = serde.serialize(value);
  } catch (e) {
    if (e instanceof InvalidArgumentError) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    const err = new InvalidArgumentError(`cannot serialise ${what} with serde '${serde.name}': ${msg}`, { serde: serde.name });
    (err as { cause?: unknown }).cause = e;
    throw err;
  }
  if (!Buffer.isBuffer(bytes)) throw new InvalidArgumentError(`serde '${serde.name}' did not return a Buffer for the ${what}`);
  return bytes;
}

/** Encodes a key with its serde: InvalidArgumentError for a null key or an unserialisable one. */
export function encodeKeyWith<K>(serde: Serde<K>, key: K): Buffer {
  return serializeWith(serde, requireKey(key), 'key');
}

/** Deserialises with the serde, turning any failure into a non-retriable AdjunctError. */
export function deserializeWith<T>(serde: Serde<T>, bytes: Buffer, what: 'key' | 'value'): T {
  try {
    return serde.deserialize(bytes);
  } catch (e) {
    if (e instanceof AdjunctError) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    throw new InvalidArgumentError(`cannot deserialise ${what} with serde '${serde.name}': ${msg}`, { serde: serde.name });
  }
}

/**
 * A read's time (asOf, fromTime, toTime): any integer millisecond, as Kafka's `long` (Long.MIN_VALUE..MAX_VALUE as
 * JS numbers included); clamped to ±MAX_SAFE_INTEGER, which changes no answer since versions are non-negative safe
 * integers. A negative asOf finds nothing.
 */
export function requireQueryTime(time: unknown, what: string): number {
  if (typeof time !== 'number' || !Number.isInteger(time)) {
    throw new InvalidArgumentError(`${what} must be an integer (epoch milliseconds), got ${String(time)}`, { [what]: String(time) });
  }
  return Math.min(Math.max(time, -Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
}

/** Normalised history bounds: fromTime at least 0 (no version is older), toTime +Infinity when unbounded. */
export interface HistoryBounds {
  fromTime: number;
  toTime: number;
  order: 'asc' | 'desc';
}

/**
 * Validates KIP-968 history options. Without an order the versions come newest first, as Kafka Streams answers a
 * MultiVersionedKeyQuery with ResultOrder.ANY; fromTime after toTime is an error, as in Kafka (equal is allowed).
 */
export function historyBounds(options: { fromTime?: number; toTime?: number; order?: 'asc' | 'desc' } = {}): HistoryBounds {
  const from = options.fromTime === undefined ? Number.NEGATIVE_INFINITY : requireQueryTime(options.fromTime, 'fromTime');
  const toTime = options.toTime === undefined ? Number.POSITIVE_INFINITY : requireQueryTime(options.toTime, 'toTime');
  if (from > toTime) {
    throw new InvalidArgumentError(`fromTime ${from} must not be after toTime ${toTime}`, {
      fromTime: String(from),
      toTime: String(toTime),
    });
  }
  const order = options.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new InvalidArgumentError(`order must be 'asc' or 'desc', got ${String(order)}`);
  return { fromTime: Math.max(from, 0), toTime, order };
}
