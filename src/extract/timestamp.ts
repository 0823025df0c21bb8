import { BadRecordError } from '../errors';
import type { SourceRecord } from './extractor';

/** What a tombstone without the configured timestamp field/header gets (`extract.timestamp.onMissing`). */
export type MissingTimestampPolicy = 'streamTime' | 'record' | 'fail';

/**
 * The timestamp of a tombstone that carries none: the partition's current stream time (so it never moves stream time;
 * the record timestamp before the partition's first version), the record timestamp, or an extraction error.
 */
export function missingTimestamp(record: SourceRecord, policy: MissingTimestampPolicy, what: string): number {
  if (policy === 'fail') {
    throw new BadRecordError(`${what} is missing in a tombstone and extract.timestamp.onMissing is fail`, {
      stage: 'extract',
      code: 'MISSING_FIELD',
    });
  }
  if (policy === 'streamTime' && record.streamTime !== undefined && Number.isSafeInteger(record.streamTime) && record.streamTime >= 0) {
    return record.streamTime;
  }
  return toEpochMillis(record.timestamp, 'millis', 'record timestamp');
}

/** Supported timestamp formats for field/header timestamps. */
export type TimestampFormat = 'millis' | 'seconds' | 'micros' | 'iso';

/** Converts a field or header value to epoch milliseconds; throws BadRecordError when it is not a valid timestamp. */
export function toEpochMillis(raw: unknown, format: TimestampFormat, where: string): number {
  let v: unknown = raw;
  if (Buffer.isBuffer(v)) v = v.toString('utf8');
  if (typeof v === 'bigint') v = Number(v);
  if (format === 'iso' || (typeof v === 'string' && !/^-?\d+$/.test(v.trim()))) {
    if (typeof v !== 'string')
      throw new BadRecordError(`${where}: expected an ISO-8601 string, got ${typeof v}`, { stage: 'extract', code: 'BAD_TIMESTAMP' });
    const ms = Date.parse(v);
    if (Number.isNaN(ms))
      throw new BadRecordError(`${where}: "${v}" is not a valid ISO-8601 timestamp`, { stage: 'extract', code: 'BAD_TIMESTAMP' });
    return check(ms, where);
  }
  const n = typeof v === 'string' ? Number(v.trim()) : typeof v === 'number' ? v : NaN;
  if (!Number.isFinite(n))
    throw new BadRecordError(`${where}: ${JSON.stringify(raw)} is not a timestamp`, { stage: 'extract', code: 'BAD_TIMESTAMP' });
  const ms = format === 'seconds' ? n * 1000 : format === 'micros' ? Math.floor(n / 1000) : n;
  return check(ms, where);
}

function check(ms: number, where: string): number {
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new BadRecordError(`${where}: timestamp ${ms} must be a non-negative integer of epoch milliseconds`, {
      stage: 'extract',
      code: 'BAD_TIMESTAMP',
    });
  return ms;
}
