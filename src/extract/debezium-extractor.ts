import { BadRecordError } from '../errors';
import type { ExtractSpec } from '../config/schema';
import { BuiltinExtractor } from './builtin-extractor';
import { ExtractResult, Extractor, SourceRecord, skip } from './extractor';
import { MissingTimestampPolicy, missingTimestamp, toEpochMillis } from './timestamp';

/** An own property of a record object (never an inherited one), or undefined. */
function own(v: unknown, name: string): any {
  return v !== null && typeof v === 'object' && Object.hasOwn(v, name) ? (v as Record<string, unknown>)[name] : undefined;
}

/** Unwraps the `{schema, payload}` envelope of the JSON converter with schemas enabled. */
function unwrap(v: unknown): unknown {
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, 'payload') && Object.hasOwn(v, 'schema'))
    return own(v, 'payload');
  return v;
}

/** Debezium change-event preset: c/r/u → `after`, d → tombstone, timestamp from `source.ts_ms`; Kafka tombstones → store tombstone. */
export class DebeziumExtractor implements Extractor {
  private readonly inner: BuiltinExtractor;
  private readonly customKey: boolean;
  private readonly onMissing: MissingTimestampPolicy;

  constructor(spec: ExtractSpec) {
    this.customKey = spec.key !== undefined;
    this.onMissing = spec.timestamp?.onMissing ?? 'streamTime';
    this.inner = new BuiltinExtractor({
      ...spec,
      value: spec.value ? { ...spec.value, from: 'value' } : undefined,
      timestamp: spec.timestamp,
    });
  }

  extract(record: SourceRecord): ExtractResult {
    const key = unwrap(record.key);
    const env = unwrap(record.value);
    const base: SourceRecord = { ...record, key };
    if (env === null || env === undefined) {
      // A Kafka tombstone has no source.ts_ms: extract.timestamp.onMissing decides (default: the partition's stream time).
      return { key: this.key(base), value: null, timestamp: missingTimestamp(base, this.onMissing, 'Debezium source.ts_ms') };
    }
    if (typeof env !== 'object')
      throw new BadRecordError('Debezium value is not an object envelope', { stage: 'extract', code: 'BAD_ENVELOPE' });
    const op = own(env, 'op');
    const ts = own(own(env, 'source'), 'ts_ms') ?? own(env, 'ts_ms');
    const timestamp = ts === undefined ? record.timestamp : toEpochMillis(ts, 'millis', 'Debezium source.ts_ms');
    switch (op) {
      case 'c':
      case 'r':
      case 'u': {
        const afterValue = own(env, 'after');
        if (afterValue === null || afterValue === undefined)
          throw new BadRecordError(`Debezium op "${op}" without "after"`, { stage: 'extract', code: 'BAD_ENVELOPE' });
        const after: SourceRecord = { ...base, value: afterValue };
        const r = this.inner.extract(after);
        if ('skip' in r) return r;
        return { key: this.key(after), value: r.value, timestamp };
      }
      case 'd': {
        const before: SourceRecord = { ...base, value: own(env, 'before') ?? null };
        return { key: this.key(before), value: null, timestamp };
      }
      case 't':
        return skip('Debezium truncate event (op "t") has no key');
      case 'm':
        return skip('Debezium message event (op "m") is not a table change');
      default:
        throw new BadRecordError(`unknown Debezium op ${JSON.stringify(op)}`, { stage: 'extract', code: 'BAD_ENVELOPE' });
    }
  }

  /** Debezium keys are structs of the primary-key columns: one column → its value, several → a composite (tuple) key. */
  private key(record: SourceRecord): unknown {
    if (this.customKey) return this.inner.extractKey(record);
    const k = record.key;
    if (k === null || k === undefined) throw new BadRecordError('Debezium record without key', { stage: 'extract', code: 'MISSING_FIELD' });
    if (typeof k === 'object' && !Array.isArray(k) && !Buffer.isBuffer(k)) {
      const vals = Object.values(k as Record<string, unknown>);
      return vals.length === 1 ? vals[0] : vals;
    }
    return k;
  }
}
