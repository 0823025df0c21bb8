import type { INamespace, Namespace, Root, Type } from 'protobufjs';
import { protobufLibrary } from './schema-libraries';

/** Options of the plain-object form: the proto3 JSON mapping (64-bit integers and bytes as strings, enum names), with every field present. */
const TO_PLAIN = { longs: String, enums: String, bytes: String, defaults: true, json: true } as const;

/** Message types declared directly in a namespace, in declaration order (what message indexes count; enums are skipped). */
const messagesOf = (ns: Namespace): Type[] => ns.nestedArray.filter((n): n is Type => n instanceof protobufLibrary().Type);

/**
 * Resolves Confluent message indexes against a parsed .proto file: `[i]` is the file's i-th top-level message,
 * `[i, j]` the j-th message nested in it, and so on. `first` is the file's first top-level message, whose parent is
 * the file's package namespace. Returns null when the path names no message.
 */
export function messageTypeAt(first: Type, indexes: number[]): Type | null {
  let candidates = first.parent ? messagesOf(first.parent) : [first];
  let type: Type | null = null;
  for (const i of indexes) {
    type = candidates[i] ?? null;
    if (!type) return null;
    candidates = messagesOf(type);
  }
  return type;
}

/** Decodes a Protobuf payload into a plain object (no message prototypes reach the extractors or the store). */
export function decodeToPlain(type: Type, payload: Buffer): Record<string, unknown> {
  return type.toObject(type.decode(payload), TO_PLAIN);
}

/** protobufjs' bundled definitions of Google's well-known types (timestamp, duration, wrappers, struct, any, empty, field_mask). */
let wellKnownFiles: string[] | undefined;
const withWellKnown = new WeakSet<Root>();

/**
 * Adds Google's well-known types to a parsed schema: Confluent serializers do not register `google/protobuf/*.proto`
 * imports as references, so the registry's schema imports them without their definitions. Skipped when the
 * references already brought a `google.protobuf` package.
 */
export function addWellKnownTypes(root: Root): void {
  if (withWellKnown.has(root)) return;
  withWellKnown.add(root);
  if (root.lookup('google.protobuf')) return;
  const { common } = protobufLibrary();
  wellKnownFiles ??= Object.keys(common).filter((f) => f.startsWith('google/protobuf/'));
  for (const f of wellKnownFiles) root.addJSON((common.get(f) as INamespace).nested!);
}
