import { BadRecordError } from '../errors';
import type { ExtractSpec } from '../config/schema';
import { ExtractResult, Extractor, SourceRecord, skip } from './extractor';
import { FieldPath, getPath, parseFieldPath, setPath } from './field-path';
import { compileFilters, RecordFilter } from './filter';
import { MissingTimestampPolicy, missingTimestamp, TimestampFormat, toEpochMillis } from './timestamp';

/** Compiled key extraction: whole key/value, one path, or composite fields (returned as an array for the tuple serde). */
interface KeyPlan {
  from: 'key' | 'value';
  path?: FieldPath;
  fields?: { name: string; path: FieldPath }[];
}

/** Compiled value extraction. */
interface ValuePlan {
  from: 'key' | 'value';
  path?: FieldPath;
  project?: FieldPath[];
}

/** Compiled timestamp extraction. */
interface TimestampPlan {
  from: 'record' | 'field' | 'header';
  path?: FieldPath;
  pathText?: string;
  header?: string;
  format: TimestampFormat;
  onMissing: MissingTimestampPolicy;
}

/** The configurable built-in extractor: field paths, projections, composite keys, timestamp sources and filters. */
export class BuiltinExtractor implements Extractor {
  private readonly keyPlan: KeyPlan;
  private readonly valuePlan: ValuePlan;
  private readonly tsPlan: TimestampPlan;
  private readonly filters: RecordFilter[];
  /** The value is the whole record value (no path, no projection). */
  readonly keepsValue: boolean;
  /** Key, timestamp and filters never look inside the record value. */
  readonly readsValue: boolean;

  constructor(spec: ExtractSpec) {
    const k = spec.key ?? { from: 'key' as const };
    this.keyPlan = {
      from: k.from,
      path: k.path ? parseFieldPath(k.path) : undefined,
      fields: k.fields?.map((f) => ({ name: f, path: parseFieldPath(f) })),
    };
    const v = spec.value ?? { from: 'value' as const };
    this.valuePlan = { from: v.from, path: v.path ? parseFieldPath(v.path) : undefined, project: v.project?.map(parseFieldPath) };
    this.keepsValue = this.valuePlan.from === 'value' && this.valuePlan.path === undefined && this.valuePlan.project === undefined;
    const t = spec.timestamp ?? { from: 'record' as const, format: 'millis' as const, onMissing: 'streamTime' as const };
    this.tsPlan = {
      from: t.from,
      path: t.path ? parseFieldPath(t.path) : undefined,
      pathText: t.path,
      header: t.header,
      format: t.format,
      onMissing: t.onMissing ?? 'streamTime',
    };
    this.filters = compileFilters(spec.filter ?? []);
    this.readsValue =
      this.keyPlan.from === 'value' ||
      (this.valuePlan.from === 'value' && !this.keepsValue) ||
      this.tsPlan.from === 'field' ||
      (spec.filter ?? []).some((f) => f.from === 'value');
  }

  extract(record: SourceRecord): ExtractResult {
    for (const f of this.filters) {
      if (!f.test(record)) return skip(`filtered out by ${f.description}`);
    }
    const key = this.extractKey(record);
    const value = this.extractValue(record);
    const timestamp = this.extractTimestamp(record, value === null);
    // Every field of Extracted in the literal: the record processor's pass-through fields then need no shape change.
    return { key, value, timestamp, valueBytes: undefined, keyBytes: undefined };
  }

  /** Extracts the store key; a missing key is a bad record (store keys are never null). */
  extractKey(record: SourceRecord): unknown {
    const src = this.keyPlan.from === 'key' ? record.key : record.value;
    if (this.keyPlan.fields) {
      return this.keyPlan.fields.map(({ name, path }) => {
        const v = getPath(src, path);
        if (v === undefined || v === null) throw missing(`composite key field "${name}"`, this.keyPlan.from);
        return v;
      });
    }
    const key = this.keyPlan.path ? getPath(src, this.keyPlan.path) : src;
    if (key === undefined || key === null) {
      throw missing(this.keyPlan.path ? `key field "${this.keyPlan.path.join('.')}"` : 'record key', this.keyPlan.from);
    }
    return key;
  }

  /** Extracts the value; null (a Kafka tombstone or a null field) becomes a store tombstone. */
  extractValue(record: SourceRecord): unknown | null {
    const src = this.valuePlan.from === 'key' ? record.key : record.value;
    if (src === null || src === undefined) return null;
    let v: unknown = this.valuePlan.path ? getPath(src, this.valuePlan.path) : src;
    if (v === undefined) throw missing(`value field "${this.valuePlan.path!.join('.')}"`, this.valuePlan.from);
    if (this.valuePlan.project && v !== null) {
      const out: Record<string, unknown> = {};
      for (const p of this.valuePlan.project) {
        const pv = getPath(v, p);
        if (pv !== undefined) setPath(out, p, pv);
      }
      v = out;
    }
    return v;
  }

  /**
   * Extracts the version timestamp: the record timestamp by default, else the configured field or header. A tombstone
   * without it gets the `onMissing` policy's timestamp; a value record without it is a bad record.
   */
  extractTimestamp(record: SourceRecord, tombstone: boolean): number {
    const p = this.tsPlan;
    if (p.from === 'field') {
      if (tombstone && (record.value === null || record.value === undefined))
        return missingTimestamp(record, p.onMissing, `timestamp field "${p.pathText}"`);
      const raw = getPath(record.value, p.path!);
      if (raw === undefined || raw === null) {
        if (tombstone) return missingTimestamp(record, p.onMissing, `timestamp field "${p.pathText}"`);
        throw missing(`timestamp field "${p.pathText}"`, 'value');
      }
      return toEpochMillis(raw, p.format, `timestamp field "${p.pathText}"`);
    }
    if (p.from === 'header') {
      const raw = record.headers[p.header!];
      if (raw === undefined) {
        if (tombstone) return missingTimestamp(record, p.onMissing, `timestamp header "${p.header}"`);
        throw new BadRecordError(`timestamp header "${p.header}" is missing`, { stage: 'extract', code: 'MISSING_FIELD' });
      }
      return toEpochMillis(raw, p.format, `timestamp header "${p.header}"`);
    }
    return toEpochMillis(record.timestamp, 'millis', 'record timestamp');
  }
}

function missing(what: string, from: string): BadRecordError {
  return new BadRecordError(`${what} is missing in the record ${from}`, { stage: 'extract', code: 'MISSING_FIELD' });
}
