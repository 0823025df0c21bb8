import { BadRecordError } from '../../errors';
import { canonicalCqlType, CellTypeError, toCell } from './cql-types';
import { CqlExecutor } from './cql-executor';
import { qualified, TableRef, versionedInsertColumns } from './layout';
import { awaitUsable, ensureColumns, SchemaOptions, tableColumns } from './schema';
import { requireValidColumns, TypedColumn } from './typed-column-spec';

/** The columns a schema maps to, plus the value fields it has that get no column (nested records, arrays, maps). */
export interface ColumnSchema {
  columns: TypedColumn[];
  unmapped: string[];
  /** What the columns were derived from, for error messages (e.g. `subject rates-value, schema id 7`). */
  origin: string;
}

/** Derives typed columns from the newest schema (the registry's latest version of a subject). */
export interface ColumnSource {
  /** `sample`: the value fields of the record that asked (Protobuf picks the message type having them). */
  describe(sample?: string[]): Promise<ColumnSchema>;
}

/** A typed column of the key: the whole key, or (`index` set) one element of a composite (tuple) key. */
export interface KeyColumn extends TypedColumn {
  index?: number;
}

/**
 * Typed columns of a store: value columns from a fixed explicit mapping, or derived from a schema that may evolve;
 * optionally fixed key columns.
 */
export type TypedColumnsOptions = ({ columns: TypedColumn[] } | { source: ColumnSource }) & { keyColumns?: KeyColumn[] };

/** The INSERT of one version with its typed columns and their bind values. */
export interface TypedRow {
  cql: string;
  cells: unknown[];
}

function incompatible(ref: TableRef, c: TypedColumn, had: string, origin: string): BadRecordError {
  return new BadRecordError(
    `incompatible schema change for field ${JSON.stringify(c.field)}: column ${c.column} of ${qualified(ref)} is ${had}, but ${origin} maps it to ${canonicalCqlType(c.type)}; ` +
      'a type change needs a new store (or a reload into a new generation after renaming the field)',
    { stage: 'write', code: 'TYPED_COLUMN_INCOMPATIBLE', context: { field: c.field, column: c.column, table: qualified(ref) } },
  );
}

/**
 * Typed columns written alongside the versioned layout's key/valid_from/value/writer in the same INSERT (still one
 * request per record). With a schema source, a value field that is not yet known, or a value that does not fit its
 * column, re-reads the newest schema: new fields become columns (ALTER TABLE ADD, race-free), a type change of an
 * existing column fails naming the field. Writes issued while an evolution runs wait for it, in call order.
 */
export class TypedColumns {
  private columns: TypedColumn[] = [];
  private keyColumns: KeyColumn[] = [];
  private readonly known = new Set<string>();
  private insertCql = '';
  private pending: Promise<void> | null = null;

  private constructor(
    private readonly exec: CqlExecutor,
    private readonly ref: TableRef,
    private readonly source: ColumnSource | null,
    private readonly schemaOptions: SchemaOptions,
  ) {}

  /** Validates the columns, checks them against the table (adding missing ones) and returns the writer. */
  static async open(exec: CqlExecutor, ref: TableRef, options: TypedColumnsOptions, schemaOptions: SchemaOptions): Promise<TypedColumns> {
    const source = 'source' in options ? options.source : null;
    const initial: ColumnSchema =
      'source' in options ? await options.source.describe() : { columns: options.columns, unmapped: [], origin: 'store.columns' };
    const typed = new TypedColumns(exec, ref, source, schemaOptions);
    const keyColumns = options.keyColumns ?? [];
    if (keyColumns.length > 0) {
      requireValidColumns([...keyColumns, ...initial.columns], 'key and value columns');
      await typed.addToTable(keyColumns, [], 'store.keyColumns');
      typed.keyColumns = keyColumns;
    }
    await typed.adopt(initial);
    return typed;
  }

  /**
   * The INSERT and its typed bind values for a key and value: key columns first, then value columns (a null value is a
   * tombstone: every value column null, the key columns still set).
   */
  async row(key: unknown, value: unknown): Promise<TypedRow> {
    if (this.pending) await this.pending.catch(() => undefined);
    const fields = this.fieldsOf(value);
    // Values with free-form keys (a JSON map) would re-read the schema for every new key: past a bound, they do not.
    const unknown =
      !this.source || fields === null || this.known.size >= MAX_KNOWN_FIELDS ? [] : Object.keys(fields).filter((f) => !this.known.has(f));
    let reread = false;
    if (this.source && unknown.length > 0) {
      await this.evolve(Object.keys(fields!));
      // Fields the newest schema still does not name stay in the value blob only (no further re-reads for them).
      for (const f of unknown) this.known.add(f);
      reread = true;
    }
    try {
      return this.build(key, fields);
    } catch (e) {
      if (!(e instanceof TypedCellError) || e.isKey || !this.source || reread) throw asMismatch(e);
    }
    // A value that does not fit its column may come from a newer schema: re-read it once, then fail naming the field.
    await this.evolve(fields === null ? undefined : Object.keys(fields));
    try {
      return this.build(key, fields);
    } catch (e) {
      throw asMismatch(e);
    }
  }

  private fieldsOf(value: unknown): Record<string, unknown> | null {
    if (value === null || value === undefined) return null;
    if (typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value)) {
      throw new BadRecordError(`typed columns need an object value, got ${Array.isArray(value) ? 'an array' : typeof value}`, {
        stage: 'write',
        code: 'TYPED_COLUMN_MISMATCH',
      });
    }
    return value as Record<string, unknown>;
  }

  private build(key: unknown, fields: Record<string, unknown> | null): TypedRow {
    const keyCells = this.keyColumns.map((c) => cell(c, c.index === undefined ? key : Array.isArray(key) ? key[c.index] : null, true));
    const cells = this.columns.map((c) =>
      cell(c, fields !== null && Object.prototype.hasOwnProperty.call(fields, c.field) ? fields[c.field] : null, false),
    );
    return { cql: this.insertCql, cells: [...keyCells, ...cells] };
  }

  /** Re-reads the newest schema once for every write waiting on it. */
  private evolve(sample?: string[]): Promise<void> {
    if (!this.pending) {
      this.pending = this.source!.describe(sample)
        .then((schema) => this.adopt(schema))
        .finally(() => {
          this.pending = null;
        });
    }
    return this.pending;
  }

  /** Takes a schema's columns: types of existing columns must match; new ones are added to the table. */
  private async adopt(schema: ColumnSchema): Promise<void> {
    try {
      requireValidColumns([...this.keyColumns, ...schema.columns], schema.origin);
    } catch (e) {
      // Names from a registry schema are the record's problem (tolerance / DLQ), not the configuration's.
      if (!this.source) throw e;
      throw new BadRecordError((e as Error).message, { stage: 'write', code: 'TYPED_COLUMN_SCHEMA', cause: e });
    }
    const byColumn = new Map(this.columns.map((c) => [c.column, c]));
    const added = schema.columns.filter((c) => !byColumn.has(c.column));
    await this.addToTable(schema.columns, [...this.keyColumns, ...this.columns], schema.origin);
    // Decimal scales may change between compatible schemas; the newest one is used for new values.
    const scales = new Map(schema.columns.map((c) => [c.column, c.scale]));
    this.columns = [...this.columns.map((c) => ({ ...c, scale: scales.get(c.column) ?? c.scale })), ...added];
    for (const c of schema.columns) this.known.add(c.field);
    for (const f of schema.unmapped) this.known.add(f);
    const names = [...versionedInsertColumns(this.ref), ...this.keyColumns.map((c) => c.column), ...this.columns.map((c) => c.column)];
    this.insertCql = `INSERT INTO ${qualified(this.ref)} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;
  }

  /**
   * Checks columns against the table's declared types and this writer's own columns (a type change is
   * TYPED_COLUMN_INCOMPATIBLE naming the field), then adds the missing ones (ALTER TABLE ADD, race-free).
   */
  private async addToTable(columns: TypedColumn[], own: TypedColumn[], origin: string): Promise<void> {
    const mine = new Map(own.map((c) => [c.column, canonicalCqlType(c.type)]));
    // One read of the table's columns: their types here, and what ensureColumns adds.
    const listed = await tableColumns(this.exec, this.ref, 'check typed columns');
    const table = new Map(listed.map((c) => [c.name, c.type]));
    for (const c of columns) {
      const had = table.get(c.column) ?? mine.get(c.column);
      if (had !== undefined && had !== canonicalCqlType(c.type)) throw incompatible(this.ref, c, had, origin);
    }
    const missing = columns.filter((c) => !table.has(c.column)).map((c) => ({ name: c.column, type: canonicalCqlType(c.type) }));
    if (missing.length > 0) await ensureColumns(this.exec, this.ref, missing, this.schemaOptions, listed);
    const fresh = columns.filter((c) => !mine.has(c.column));
    if (fresh.length > 0) await this.awaitVisible(fresh.map((c) => c.column));
  }

  /** Waits until statements naming the columns prepare (see awaitUsable: another worker may have added them just now). */
  private async awaitVisible(columns: string[]): Promise<void> {
    await awaitUsable(this.exec, `SELECT ${columns.join(', ')} FROM ${qualified(this.ref)} LIMIT 1`, 'check typed columns are usable');
  }
}

/** Most value field names a writer remembers; beyond it, unknown fields no longer trigger a schema re-read. */
const MAX_KNOWN_FIELDS = 10_000;

/** A field value that does not fit its column's type. */
class TypedCellError extends Error {
  constructor(
    readonly column: TypedColumn,
    readonly isKey: boolean,
    message: string,
  ) {
    super(message);
  }
}

/** The bind value of one column; a value of the wrong type throws TypedCellError. */
function cell(c: TypedColumn, v: unknown, isKey: boolean): unknown {
  try {
    return toCell(c.type, v, c.scale);
  } catch (e) {
    throw e instanceof CellTypeError ? new TypedCellError(c, isKey, e.message) : e;
  }
}

function asMismatch(e: unknown): unknown {
  if (!(e instanceof TypedCellError)) return e;
  const c = e.column;
  return new BadRecordError(
    `${e.isKey ? 'key ' : ''}field ${JSON.stringify(c.field)} does not fit typed column ${c.column}: ${e.message}`,
    {
      stage: 'write',
      code: 'TYPED_COLUMN_MISMATCH',
      context: { field: c.field, column: c.column },
    },
  );
}
