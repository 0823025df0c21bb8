import { types } from 'cassandra-driver';

/** The CQL types a typed column may have (a fixed allow-list: a type name never comes from configuration unchecked). */
export const CQL_COLUMN_TYPES = [
  'text',
  'ascii',
  'varchar',
  'boolean',
  'tinyint',
  'smallint',
  'int',
  'bigint',
  'varint',
  'float',
  'double',
  'decimal',
  'timestamp',
  'date',
  'uuid',
  'timeuuid',
  'blob',
  'inet',
] as const;

/** A CQL type of the allow-list. */
export type CqlColumnType = (typeof CQL_COLUMN_TYPES)[number];

/** True when name is on the allow-list of typed-column types. */
export function isCqlColumnType(name: unknown): name is CqlColumnType {
  return typeof name === 'string' && (CQL_COLUMN_TYPES as readonly string[]).includes(name);
}

/** The type name Cassandra reports in system_schema.columns for a column declared with this type (varchar is text). */
export function canonicalCqlType(type: CqlColumnType): string {
  return type === 'varchar' ? 'text' : type;
}

const INT_RANGES: Partial<Record<CqlColumnType, [number, number]>> = {
  tinyint: [-128, 127],
  smallint: [-32768, 32767],
  int: [-2147483648, 2147483647],
};

const INTEGER_TEXT = /^-?\d{1,40}$/;
const DECIMAL_TEXT = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/;
const MS_PER_DAY = 86_400_000;

/** Thrown by toCell when a value does not fit its column type (the caller names the field and record). */
export class CellTypeError extends Error {}

function fail(type: CqlColumnType, value: unknown): never {
  const what = value === null ? 'null' : Buffer.isBuffer(value) ? 'bytes' : Array.isArray(value) ? 'an array' : typeof value;
  throw new CellTypeError(`a ${what} value does not fit CQL type ${type}`);
}

function integer(type: CqlColumnType, v: unknown): number {
  const range = INT_RANGES[type]!;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < range[0] || v > range[1]) fail(type, v);
  return v;
}

function toLong(v: unknown): types.Long {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return types.Long.fromNumber(v);
  if (typeof v === 'bigint') return types.Long.fromString(v.toString());
  if (typeof v === 'string' && INTEGER_TEXT.test(v)) {
    const big = BigInt(v);
    if (big >= -(2n ** 63n) && big < 2n ** 63n) return types.Long.fromString(v);
  }
  return fail('bigint', v);
}

function toDecimal(v: unknown, scale: number | undefined): types.BigDecimal {
  if (typeof v === 'number' && Number.isFinite(v)) return types.BigDecimal.fromString(String(v));
  if (typeof v === 'string' && DECIMAL_TEXT.test(v)) return types.BigDecimal.fromString(v);
  // Avro decimal: the unscaled value as big-endian two's complement bytes; the scale comes from the schema.
  if (Buffer.isBuffer(v) && scale !== undefined && v.length > 0)
    return new types.BigDecimal(types.Integer.fromBuffer(v) as unknown as number, scale);
  return fail('decimal', v);
}

function toTimestamp(v: unknown): Date {
  if (typeof v === 'number' && Number.isFinite(v)) return new Date(v);
  if (v instanceof Date && !Number.isNaN(v.getTime())) return v;
  if (typeof v === 'string') {
    const d = new Date(v);
    if (!Number.isNaN(d.getTime())) return d;
  }
  return fail('timestamp', v);
}

function toDate(v: unknown): types.LocalDate {
  if (typeof v === 'string' && DATE_TEXT.test(v)) return types.LocalDate.fromString(v);
  // Avro `date`: days since the epoch.
  if (typeof v === 'number' && Number.isInteger(v)) {
    const d = new Date(v * MS_PER_DAY);
    return new types.LocalDate(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
  }
  return fail('date', v);
}

/**
 * Converts one field value to the bind value of its typed column. Strict: a value of another JS type than the column's
 * (a string in a double column, an object anywhere) throws CellTypeError rather than being coerced. null/undefined → null.
 */
export function toCell(type: CqlColumnType, v: unknown, scale?: number): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'text':
    case 'varchar':
    case 'ascii':
      if (typeof v !== 'string' || (type === 'ascii' && !/^\p{ASCII}*$/u.test(v))) fail(type, v);
      return v;
    case 'boolean':
      if (typeof v !== 'boolean') fail(type, v);
      return v;
    case 'tinyint':
    case 'smallint':
    case 'int':
      return integer(type, v);
    case 'bigint':
      return toLong(v);
    case 'varint':
      if ((typeof v === 'number' && Number.isSafeInteger(v)) || typeof v === 'bigint' || (typeof v === 'string' && INTEGER_TEXT.test(v)))
        return types.Integer.fromString(String(v));
      return fail(type, v);
    case 'float':
    case 'double':
      if (typeof v !== 'number') fail(type, v);
      return v;
    case 'decimal':
      return toDecimal(v, scale);
    case 'timestamp':
      return toTimestamp(v);
    case 'date':
      return toDate(v);
    case 'uuid':
    case 'timeuuid':
      if (typeof v !== 'string' || !UUID_TEXT.test(v)) fail(type, v);
      return type === 'uuid' ? types.Uuid.fromString(v) : types.TimeUuid.fromString(v);
    case 'blob':
      if (!Buffer.isBuffer(v)) fail(type, v);
      return v;
    case 'inet':
      if (typeof v !== 'string') fail(type, v);
      try {
        return types.InetAddress.fromString(v);
      } catch {
        return fail(type, v);
      }
  }
}

/** Long.MIN as a bigint cell (`prev` of a key's first version). */
const LONG_MIN_CELL = Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 0]);

/** The big-endian int64 serialisation of a safe integer, -Infinity as Long.MIN (a bigint cell, encoded without a Long or BigInt per row). */
export function int64Bytes(n: number): Buffer {
  if (n === Number.NEGATIVE_INFINITY) return LONG_MIN_CELL;
  const b = Buffer.allocUnsafe(8);
  const high = Math.floor(n / 0x100000000);
  b.writeInt32BE(high, 0);
  b.writeUInt32BE(n - high * 0x100000000, 4);
  return b;
}
