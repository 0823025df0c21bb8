import { ConfigError } from '../errors';
import { SourceRecord } from './extractor';
import { getPath, parseFieldPath } from './field-path';

/** A compiled filter predicate. */
export interface RecordFilter {
  description: string;
  test(record: SourceRecord): boolean;
}

/** Filter settings as in the YAML config. */
export interface FilterSpec {
  path: string;
  from: 'key' | 'value';
  equals?: string | number | boolean | null;
  notEquals?: string | number | boolean | null;
  in?: (string | number | boolean)[];
  exists?: boolean;
}

/** Compiles filter specs; every filter must hold for a record to be kept. */
export function compileFilters(specs: FilterSpec[]): RecordFilter[] {
  return specs.map((s) => {
    const path = parseFieldPath(s.path);
    const checks: ((v: unknown) => boolean)[] = [];
    if (s.equals !== undefined) checks.push((v) => v === s.equals);
    if (s.notEquals !== undefined) checks.push((v) => v !== s.notEquals);
    if (s.in !== undefined) checks.push((v) => s.in!.includes(v as never));
    if (s.exists !== undefined) checks.push((v) => (v !== undefined && v !== null) === s.exists);
    if (checks.length === 0) throw new ConfigError(`filter on "${s.path}" needs one of equals, notEquals, in, exists`);
    return {
      description: `filter ${s.from}.${s.path}`,
      test: (r: SourceRecord) => {
        const src = s.from === 'key' ? r.key : r.value;
        // Tombstones pass filters on the value: a delete must always reach the store.
        if (s.from === 'value' && (src === null || src === undefined)) return true;
        const v = getPath(src, path);
        return checks.every((c) => c(v));
      },
    };
  });
}
