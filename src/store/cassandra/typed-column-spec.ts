import { InvalidIdentifierError } from '../../errors';
import { CqlColumnType, CQL_COLUMN_TYPES, isCqlColumnType } from './cql-types';
import { CQL_NAME_PATTERN } from './identifiers';

/** One typed column: the top-level value field it is read from, its column name and CQL type (Avro decimals carry their scale). */
export interface TypedColumn {
  field: string;
  column: string;
  type: CqlColumnType;
  scale?: number;
}

/** Columns of the versioned layout (and of kv tables): a typed column may never take one of these names. */
export const LAYOUT_COLUMNS: readonly string[] = ['key', 'prev', 'valid_from', 'value', 'writer', 'partition', 'bucket'];

/** CQL reserved keywords, which cannot be unquoted column names. */
const CQL_RESERVED = new Set(
  (
    'add allow alter and apply asc authorize batch begin by columnfamily create default delete desc describe drop entries execute from full ' +
    'grant if in index infinity insert into is keyspace limit materialized mbean mbeans modify nan norecursive not null of on or order ' +
    'primary rename replace revoke schema select set table to token truncate unlogged unset update use using view where with'
  ).split(' '),
);

/** Column name of a value field: camelCase becomes snake_case, then lowercase (`sourceName` → `source_name`). */
export function columnNameFor(field: string): string {
  return field.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** Why a column name is unusable, or null when it is a valid, unreserved, unquoted CQL identifier. */
export function columnNameProblem(column: string): string | null {
  if (!CQL_NAME_PATTERN.test(column)) return `must match ${CQL_NAME_PATTERN}`;
  if (LAYOUT_COLUMNS.includes(column)) return `is a column of the versioned layout (${LAYOUT_COLUMNS.join(', ')})`;
  if (CQL_RESERVED.has(column)) return 'is a reserved CQL keyword';
  return null;
}

/** A problem of a typed-column mapping, naming the field. */
export interface MappingProblem {
  field: string;
  message: string;
}

/** Every problem of a set of typed columns: invalid or reserved names, duplicates, types off the allow-list. */
export function typedColumnProblems(columns: { field: string; column: string; type: unknown }[]): MappingProblem[] {
  const problems: MappingProblem[] = [];
  const seen = new Map<string, string>();
  for (const c of columns) {
    if (!isCqlColumnType(c.type)) {
      problems.push({ field: c.field, message: `unknown CQL type ${JSON.stringify(c.type)}; allowed: ${CQL_COLUMN_TYPES.join(', ')}` });
    }
    const why = columnNameProblem(c.column);
    if (why !== null) problems.push({ field: c.field, message: `column name ${JSON.stringify(c.column)} ${why}` });
    const other = seen.get(c.column);
    if (other !== undefined)
      problems.push({ field: c.field, message: `column ${c.column} is also the column of field ${JSON.stringify(other)}` });
    seen.set(c.column, c.field);
  }
  return problems;
}

/** Validates an explicit YAML mapping `{field: cqlType}` and returns its columns; throws InvalidIdentifierError naming every bad field. */
export function explicitTypedColumns(mapping: Record<string, unknown>): TypedColumn[] {
  const columns = Object.entries(mapping).map(([field, type]) => ({ field, column: columnNameFor(field), type }));
  requireValidColumns(columns, 'store.columns');
  return columns as TypedColumn[];
}

/**
 * Key columns of an explicit YAML mapping `{name: cqlType}`, each named `key_<name>` (so they never clash with value
 * columns). With a composite key (`keyFields`, the tuple's fields in order) every name must be one of them and takes
 * that element; otherwise the mapping has exactly one entry, which takes the whole key.
 */
export function keyColumnsOf(
  mapping: Record<string, unknown>,
  keyFields?: string[],
): { field: string; column: string; type: unknown; index?: number }[] {
  return Object.entries(mapping).map(([field, type]) => {
    const c: { field: string; column: string; type: unknown; index?: number } = { field, column: `key_${columnNameFor(field)}`, type };
    if (keyFields) c.index = keyFields.indexOf(field);
    return c;
  });
}

/** Problems of a key-column mapping beyond the column rules: unknown composite-key fields, several columns for a scalar key. */
export function keyColumnProblems(mapping: Record<string, unknown>, keyFields?: string[]): MappingProblem[] {
  const names = Object.keys(mapping);
  if (keyFields)
    return names
      .filter((f) => !keyFields.includes(f))
      .map((field) => ({ field, message: `is not one of the composite key's fields [${keyFields.join(', ')}]` }));
  return names.length > 1
    ? names.slice(1).map((field) => ({ field, message: 'a scalar key has one key column (use extract.key.fields for a composite key)' }))
    : [];
}

/** Validates an explicit key-column mapping and returns its columns; throws InvalidIdentifierError naming every bad field. */
export function explicitKeyColumns(mapping: Record<string, unknown>, keyFields?: string[]): (TypedColumn & { index?: number })[] {
  const columns = keyColumnsOf(mapping, keyFields);
  const problems = [...typedColumnProblems(columns), ...keyColumnProblems(mapping, keyFields)];
  if (problems.length > 0) {
    throw new InvalidIdentifierError(
      `invalid key columns in store.keyColumns: ${problems.map((p) => `field ${JSON.stringify(p.field)}: ${p.message}`).join('; ')}`,
      { fields: problems.map((p) => p.field) },
    );
  }
  return columns as (TypedColumn & { index?: number })[];
}

/** Throws InvalidIdentifierError unless every column is valid (checked before any CQL is built). */
export function requireValidColumns(columns: { field: string; column: string; type: unknown }[], where: string): void {
  const problems = typedColumnProblems(columns);
  if (problems.length > 0) {
    const text = problems.map((p) => `field ${JSON.stringify(p.field)}: ${p.message}`).join('; ');
    throw new InvalidIdentifierError(`invalid typed columns in ${where}: ${text}`, { fields: problems.map((p) => p.field) });
  }
}
