import { BadRecordError } from '../errors';

/** Supported timestamp formats for field/header timestamps. */
export type TimestampFormat = 'millis' | 'seconds' | 'micros' | 'iso';

/** Converts a field or header value to epoch milliseconds; throws BadRecordError when it is not a valid timestamp. */
export function toEpochMillis(raw: unknown, format: TimestampFormat, where: string): number {
  let v: unknown = raw;
  if (Buffer.isBuffer(v)) v = v.toString('utf8');
  if (typeof v === 'bigint') v = Number(v);
  if (format === 'iso' || (typeof v === 'string' && !/^-?\d+$/.test(v.trim()))) {
    if (typeof v !== 'string') throw new BadRecordError(`${where}: expected an ISO-8601 string, got ${typeof v}`, { stage: 'extract', code: 'BAD_TIMESTAMP' });
    const ms = Date.parse(v);
    if (Number.isNaN(ms)) throw new BadRecordError(`${where}: "${v}" is not a valid ISO-8601 timestamp`, { stage: 'extract', code: 'BAD_TIMESTAMP' });
    return check(ms, where);
  }
  const n = typeof v === 'string' ? Number(v.trim()) : typeof v === 'number' ? v : NaN;
  if (!Number.isFinite(n)) throw new BadRecordError(`${where}: ${JSON.stringify(raw)} is not a timestamp`, { stage: 'extract', code: 'BAD_TIMESTAMP' });
  const ms = format === 'seconds' ? n * 1000 : format === 'micros' ? Math.floor(n / 1000) : n;
  return check(ms, where);
}

function check(ms: number, where: string): number {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new BadRecordError(`${where}: timestamp ${ms} must be a non-negative integer of epoch milliseconds`, { stage: 'extract', code: 'BAD_TIMESTAMP' });
  return ms;
}
