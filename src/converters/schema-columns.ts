import type { Namespace, Type as ProtoType } from 'protobufjs';
import { protobufLibrary } from './schema-libraries';
import { ConfigError } from '../errors';
import { CqlColumnType } from '../store/cassandra';
import { columnNameFor, TypedColumn } from '../store/cassandra';

/** Typed columns of a schema's top-level fields; fields of a type with no scalar column (records, arrays, maps) are `unmapped`. */
export interface SchemaFields {
  columns: TypedColumn[];
  unmapped: string[];
}

type Json = Record<string, unknown>;

const AVRO_PRIMITIVES: Record<string, CqlColumnType | undefined> = {
  boolean: 'boolean',
  int: 'int',
  long: 'bigint',
  float: 'float',
  double: 'double',
  string: 'text',
  bytes: 'blob',
};

const AVRO_LOGICAL: Record<string, CqlColumnType | undefined> = {
  'timestamp-millis': 'timestamp',
  date: 'date',
  uuid: 'uuid',
  decimal: 'decimal',
};

/** CQL type of an Avro field type (a nullable union `[null, T]` is T), with the scale of decimals; null when it has no scalar column. */
function avroColumnType(t: unknown, named: Map<string, CqlColumnType | null>): { type: CqlColumnType; scale?: number } | null {
  if (Array.isArray(t)) {
    const branches = t.filter((b) => b !== 'null');
    return branches.length === 1 ? avroColumnType(branches[0], named) : null;
  }
  if (typeof t === 'string') {
    const p = AVRO_PRIMITIVES[t];
    if (p) return { type: p };
    const n = named.get(t) ?? named.get(t.split('.').pop()!);
    return n ? { type: n } : null;
  }
  if (t === null || typeof t !== 'object') return null;
  const o = t as Json;
  const logical = typeof o.logicalType === 'string' ? AVRO_LOGICAL[o.logicalType] : undefined;
  if (logical === 'decimal' && o.type === 'bytes') return { type: 'decimal', scale: typeof o.scale === 'number' ? o.scale : 0 };
  if (logical && logical !== 'decimal') return { type: logical };
  const kind = o.type;
  const own: CqlColumnType | null = kind === 'enum' ? 'text' : kind === 'fixed' ? 'blob' : null;
  if (typeof o.name === 'string' && (kind === 'enum' || kind === 'fixed' || kind === 'record')) named.set(o.name, own);
  if (own) return { type: own };
  return typeof kind === 'string' && AVRO_PRIMITIVES[kind] ? { type: AVRO_PRIMITIVES[kind]! } : null;
}

function avroFields(schema: unknown): SchemaFields {
  const s = schema as Json;
  if (s === null || typeof s !== 'object' || s.type !== 'record' || !Array.isArray(s.fields)) {
    throw new ConfigError('typed columns from an Avro schema need a record schema');
  }
  const named = new Map<string, CqlColumnType | null>();
  const out: SchemaFields = { columns: [], unmapped: [] };
  for (const f of s.fields as Json[]) add(out, String(f.name), avroColumnType(f.type, named));
  return out;
}

function add(out: SchemaFields, field: string, t: { type: CqlColumnType; scale?: number } | null): void {
  if (t === null) out.unmapped.push(field);
  else out.columns.push({ field, column: columnNameFor(field), ...t });
}

const JSON_FORMATS: Record<string, CqlColumnType | undefined> = { 'date-time': 'timestamp', date: 'date', uuid: 'uuid' };
const JSON_TYPES: Record<string, CqlColumnType | undefined> = { string: 'text', integer: 'bigint', number: 'double', boolean: 'boolean' };

function jsonColumnType(p: unknown): { type: CqlColumnType } | null {
  if (p === null || typeof p !== 'object') return null;
  const o = p as Json;
  const types = (Array.isArray(o.type) ? o.type : [o.type]).filter((t) => t !== 'null');
  if (types.length !== 1 || typeof types[0] !== 'string') return null;
  if (types[0] === 'string' && typeof o.format === 'string' && JSON_FORMATS[o.format]) return { type: JSON_FORMATS[o.format]! };
  const t = JSON_TYPES[types[0]];
  return t ? { type: t } : null;
}

function jsonSchemaFields(schema: unknown): SchemaFields {
  const props = (schema as Json)?.properties;
  if (props === null || typeof props !== 'object')
    throw new ConfigError('typed columns from a JSON Schema need an object schema with "properties"');
  const out: SchemaFields = { columns: [], unmapped: [] };
  for (const [field, p] of Object.entries(props as Json)) add(out, field, jsonColumnType(p));
  return out;
}

const PROTO_SCALARS: Record<string, CqlColumnType | undefined> = {
  double: 'double',
  float: 'float',
  int32: 'int',
  sint32: 'int',
  sfixed32: 'int',
  uint32: 'bigint',
  fixed32: 'bigint',
  int64: 'bigint',
  sint64: 'bigint',
  sfixed64: 'bigint',
  uint64: 'varint',
  fixed64: 'varint',
  bool: 'boolean',
  string: 'text',
};

/** Every message type of a parsed .proto file, top-level first, then nested ones. */
function messagesIn(ns: Namespace): ProtoType[] {
  const lib = protobufLibrary();
  const own = ns.nestedArray.filter((n): n is ProtoType => n instanceof lib.Type);
  const nested = ns.nestedArray.filter((n): n is Namespace => n instanceof lib.Namespace).flatMap(messagesIn);
  return [...own, ...nested.filter((m) => !own.includes(m))];
}

/**
 * The columns of the message type a record was decoded with. The converter decodes every field (defaults included),
 * so the message is the one whose field names are the record's (`sample`); without a sample nothing is mapped yet
 * (the first record brings its fields and the writer re-reads the schema).
 */
function protobufFields(text: string, sample?: string[]): SchemaFields {
  const out: SchemaFields = { columns: [], unmapped: [] };
  if (!sample || sample.length === 0) return out;
  // Parsed as the registry client parses it, so field names are those the converter decodes to (camelCase).
  const { parse, Enum } = protobufLibrary();
  const parsed = parse(text);
  const ns = (parsed.package ? parsed.root.lookup(parsed.package) : parsed.root) as Namespace | null;
  const messages = ns ? messagesIn(ns) : [];
  const names = (m: ProtoType) => new Set(m.fieldsArray.map((f) => f.name));
  const fitting = messages.filter((m) => sample.every((f) => names(m).has(f)));
  const type = fitting.find((m) => names(m).size === sample.length) ?? fitting[0];
  if (!type) throw new ConfigError(`no message type of the Protobuf schema has the fields [${sample.join(', ')}]`);
  for (const f of type.fieldsArray) {
    try {
      f.resolve();
    } catch {
      out.unmapped.push(f.name); // an imported message type (e.g. a well-known type) has no scalar column
      continue;
    }
    const scalar =
      f.repeated || f.map ? undefined : f.resolvedType instanceof Enum ? 'text' : f.resolvedType ? undefined : PROTO_SCALARS[f.type];
    add(out, f.name, scalar ? { type: scalar } : null);
  }
  return out;
}

/**
 * Typed columns of a registry schema (its text and the registry's schemaType: AVRO, JSON or PROTOBUF): the top-level
 * scalar fields of the record / object / the message whose fields the `sample` record has. Only `fields` are kept when
 * given (a value projection).
 */
export function schemaFields(schemaType: string, text: string, fields?: string[], sample?: string[]): SchemaFields {
  const all =
    schemaType === 'PROTOBUF'
      ? protobufFields(text, sample)
      : schemaType === 'JSON'
        ? jsonSchemaFields(JSON.parse(text))
        : avroFields(JSON.parse(text));
  if (!fields) return all;
  const keep = new Set(fields);
  return { columns: all.columns.filter((c) => keep.has(c.field)), unmapped: all.unmapped.filter((f) => keep.has(f)) };
}
