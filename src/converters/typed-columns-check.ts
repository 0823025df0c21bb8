import type { AdjunctConfig } from '../config/schema';
import { describeError } from '../errors';
import { CqlColumnType } from '../store/cassandra';
import { typedColumnProblems } from '../store/cassandra';
import { RegistryColumnSource } from './registry-column-source';

/** A typed-column mapping that does not fit a registry schema, at its YAML path. */
export interface SchemaFitProblem {
  path: string;
  message: string;
}

/** Explicit CQL types that can hold the values of a field whose schema maps to a given type (what toCell converts). */
const FITS: Record<CqlColumnType, CqlColumnType[]> = {
  text: ['text', 'varchar', 'ascii', 'uuid', 'timeuuid', 'inet', 'timestamp', 'date', 'decimal', 'varint', 'bigint'],
  varchar: ['text', 'varchar', 'ascii'],
  ascii: ['text', 'varchar', 'ascii'],
  boolean: ['boolean'],
  tinyint: ['tinyint', 'smallint', 'int', 'bigint', 'varint', 'float', 'double', 'decimal'],
  smallint: ['smallint', 'int', 'bigint', 'varint', 'float', 'double', 'decimal'],
  int: ['int', 'bigint', 'varint', 'float', 'double', 'decimal', 'date'],
  bigint: ['bigint', 'varint', 'double', 'decimal', 'timestamp'],
  varint: ['varint', 'decimal'],
  float: ['float', 'double', 'decimal'],
  double: ['double', 'decimal'],
  // An Avro decimal's scale is in the schema: only `typed: true` knows it.
  decimal: [],
  timestamp: ['timestamp', 'bigint'],
  date: ['date', 'int'],
  uuid: ['uuid', 'text', 'varchar'],
  timeuuid: ['timeuuid', 'uuid', 'text'],
  blob: ['blob'],
  inet: ['inet', 'text'],
};

const REGISTRY_FORMATS = new Set(['avro', 'json-schema', 'protobuf']);

/**
 * `adjunct validate --registry`: reads the latest value schema of every typed pipeline's topics and reports mappings
 * that do not fit it: explicit columns naming a field the schema lacks or a type its values cannot convert to, and
 * schema-derived column names that are not valid columns. Pipelines with a topicPattern are skipped (no topics yet).
 */
export async function checkTypedColumnsAgainstRegistry(cfg: AdjunctConfig): Promise<SchemaFitProblem[]> {
  const problems: SchemaFitProblem[] = [];
  if (!cfg.registry) return problems;
  for (const [i, p] of cfg.pipelines.entries()) {
    const s = p.store;
    if ((!s.typed && !s.columns) || !REGISTRY_FORMATS.has(p.valueConverter) || !p.topics) continue;
    for (const topic of p.topics) {
      const subject = `${topic}-value`;
      const explicit = s.columns ? Object.entries(s.columns) : [];
      try {
        const schema = await new RegistryColumnSource(cfg.registry, subject).describe(
          explicit.length ? explicit.map(([f]) => f) : undefined,
        );
        const at = (...rest: string[]) => [`pipelines[${i}].store`, ...rest].join('.');
        if (s.typed) {
          for (const pr of typedColumnProblems(schema.columns))
            problems.push({ path: at('typed'), message: `${schema.origin}: field ${JSON.stringify(pr.field)}: ${pr.message}` });
        }
        for (const [field, type] of explicit) {
          const derived = schema.columns.find((c) => c.field === field);
          if (!derived) {
            const why = schema.unmapped.includes(field) ? 'is not a scalar field (record, array, map or union)' : 'is not a field';
            problems.push({ path: at('columns', field), message: `${JSON.stringify(field)} ${why} of ${schema.origin}` });
          } else if (!FITS[derived.type].includes(type as CqlColumnType)) {
            const hint = derived.type === 'decimal' ? ' (an Avro decimal needs typed: true, which knows its scale)' : '';
            problems.push({
              path: at('columns', field),
              message: `${JSON.stringify(field)} is ${derived.type} in ${schema.origin}; its values do not fit CQL type ${type}${hint}`,
            });
          }
        }
      } catch (e) {
        problems.push({
          path: `pipelines[${i}].store`,
          message: `cannot check typed columns against subject ${subject}: ${describeError(e)}`,
        });
      }
    }
  }
  return problems;
}
