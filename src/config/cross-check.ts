import { AdjunctConfig, PipelineSpec } from './schema';
import { topicMatcher } from './topic-matcher';
import { renderTableOptions, TableOptions, versionedTtlOption, VERSIONED_TTL_MESSAGE } from '../store/cassandra';
import { baseTableForStore, tableNameForStore } from '../store/cassandra';
import { parseFieldPath } from '../extract/field-path';
import { columnNameFor, keyColumnProblems, keyColumnsOf, typedColumnProblems } from '../store/cassandra';

/** A semantic problem found after schema validation. */
export interface CrossProblem {
  path: (string | number)[];
  message: string;
}

/** Converters that read the Confluent wire format through the schema registry. */
const REGISTRY_CONVERTERS = new Set(['avro', 'json-schema', 'protobuf']);

/** Exactly one of topics/topicPattern; the DLQ topic must not be consumed by its own pipeline (as in Kafka Connect). */
function checkTopics(p: PipelineSpec, i: number): CrossProblem[] {
  if (!p.topics === !p.topicPattern) {
    return [
      {
        path: ['pipelines', i, p.topics ? 'topicPattern' : 'topics'],
        message: 'set exactly one of "topics" (a list) or "topicPattern" (a regex)',
      },
    ];
  }
  const dlq = p.errors.deadLetterQueue?.topic;
  if (dlq && p.topics?.includes(dlq))
    return [
      { path: ['pipelines', i, 'errors', 'deadLetterQueue', 'topic'], message: `the dead-letter queue topic "${dlq}" is also in topics` },
    ];
  if (dlq && p.topicPattern && topicMatcher(p.topicPattern)(dlq)) {
    return [
      {
        path: ['pipelines', i, 'errors', 'deadLetterQueue', 'topic'],
        message: `the dead-letter queue topic "${dlq}" matches topicPattern`,
      },
    ];
  }
  return [];
}

/** Typed columns: opt-in on versioned stores of object values; explicit mappings must fit the allow-lists and the projection. */
function checkTypedColumns(p: PipelineSpec, i: number): CrossProblem[] {
  const s = p.store;
  if (!s.typed && s.columns === undefined && s.keyColumns === undefined) return [];
  const at = (...rest: (string | number)[]) => ['pipelines', i, 'store', ...rest];
  const problems: CrossProblem[] = [];
  if (s.kind !== 'versioned') problems.push({ path: at('kind'), message: 'typed columns are written for versioned stores only' });
  if (s.valueSerde !== 'json')
    problems.push({ path: at('valueSerde'), message: 'typed columns read fields of an object value: valueSerde must be json' });
  if (s.typed && s.columns !== undefined)
    problems.push({
      path: at('columns'),
      message: 'set either typed: true (columns from the schema) or an explicit columns mapping, not both',
    });
  if (s.typed) {
    if (!REGISTRY_CONVERTERS.has(p.valueConverter))
      problems.push({
        path: at('typed'),
        message: `typed: true derives columns from the registry schema of the value; valueConverter ${p.valueConverter} has none (use an explicit columns mapping)`,
      });
    if (p.extract.value?.path || p.extract.preset !== 'none' || p.extract.module) {
      problems.push({
        path: at('typed'),
        message:
          'typed: true maps the top-level fields of the value schema; with a value path, preset or extractor module use an explicit columns mapping',
      });
    }
  }
  if (s.keyColumns !== undefined) {
    const keyFields = p.extract.key?.fields;
    const key = keyColumnsOf(s.keyColumns, keyFields);
    if (key.length === 0) problems.push({ path: at('keyColumns'), message: 'keyColumns must map at least one key field' });
    for (const pr of [...typedColumnProblems(key), ...keyColumnProblems(s.keyColumns, keyFields)])
      problems.push({ path: at('keyColumns', pr.field), message: pr.message });
  }
  if (s.columns !== undefined) {
    const columns = Object.entries(s.columns).map(([field, type]) => ({ field, column: columnNameFor(field), type }));
    if (columns.length === 0) problems.push({ path: at('columns'), message: 'columns must map at least one field' });
    for (const pr of typedColumnProblems(columns)) problems.push({ path: at('columns', pr.field), message: pr.message });
    const project = p.extract.value?.project;
    if (project) {
      const kept = new Set(project.map((f) => f.split(/[.[]/)[0]));
      for (const c of columns)
        if (!kept.has(c.field))
          problems.push({
            path: at('columns', c.field),
            message: `field ${JSON.stringify(c.field)} is not kept by extract.value.project [${project.join(', ')}]`,
          });
    }
  }
  return problems;
}

/** Checks rules that span several fields: unique names, dependsOn targets, converters needing a registry, DLQ rules. */
export function crossCheck(cfg: AdjunctConfig): CrossProblem[] {
  const problems: CrossProblem[] = [];
  const names = new Map<string, number>();
  const stores = new Map<string, number>();
  cfg.pipelines.forEach((p, i) => {
    if (names.has(p.name))
      problems.push({
        path: ['pipelines', i, 'name'],
        message: `duplicate pipeline name "${p.name}" (also pipelines[${names.get(p.name)}])`,
      });
    names.set(p.name, i);
    if (stores.has(p.store.name))
      problems.push({
        path: ['pipelines', i, 'store', 'name'],
        message: `store "${p.store.name}" is already written by pipelines[${stores.get(p.store.name)}]; one pipeline per store`,
      });
    stores.set(p.store.name, i);
  });
  problems.push(...storeTableCollisions(cfg.pipelines));
  cfg.pipelines.forEach((p, i) => {
    p.dependsOn.forEach((d, j) => {
      const target = names.get(d);
      if (target === undefined) problems.push({ path: ['pipelines', i, 'dependsOn', j], message: `unknown pipeline "${d}"` });
      else if (!cfg.pipelines[target].bootstrap)
        problems.push({
          path: ['pipelines', i, 'dependsOn', j],
          message: `pipeline "${d}" is not a bootstrap pipeline (set bootstrap: true on it)`,
        });
      if (d === p.name) problems.push({ path: ['pipelines', i, 'dependsOn', j], message: 'a pipeline cannot depend on itself' });
    });
    for (const side of ['keyConverter', 'valueConverter'] as const) {
      if (REGISTRY_CONVERTERS.has(p[side]) && !cfg.registry)
        problems.push({ path: ['pipelines', i, side], message: `${p[side]} converter needs a top-level "registry" section` });
    }
    problems.push(...checkTopics(p, i));
    if (p.store.buckets !== undefined && p.store.kind === 'versioned' && p.store.scope === 'global')
      problems.push({
        path: ['pipelines', i, 'store', 'buckets'],
        message: 'buckets applies to partitioned scope and kv stores; a versioned global store has one Cassandra partition per key',
      });
    if (p.store.layout === 'edges' && (p.store.kind !== 'versioned' || p.store.scope !== 'global'))
      problems.push({ path: ['pipelines', i, 'store', 'layout'], message: 'layout edges applies to versioned stores of global scope' });
    if (p.store.layout === 'edges' && (p.store.typed || p.store.columns !== undefined || p.store.keyColumns !== undefined))
      problems.push({
        path: ['pipelines', i, 'store', 'layout'],
        message: 'layout edges does not take typed columns (typed, columns, keyColumns)',
      });
    if (p.errors.tolerance === 'all' && !p.errors.deadLetterQueue) {
      problems.push({
        path: ['pipelines', i, 'errors', 'tolerance'],
        message: 'tolerance "all" requires errors.deadLetterQueue.topic (bad records are never dropped silently)',
      });
    }
    // The store layer's own rule (KIP-889 keeps a key's latest version: no wall-clock expiry), reported at its YAML path.
    const ttlOption =
      p.store.kind === 'versioned' ? versionedTtlOption(p.store.tableOptions as TableOptions | undefined, p.store.ttlSeconds) : null;
    if (ttlOption === 'ttlSeconds') problems.push({ path: ['pipelines', i, 'store', 'ttlSeconds'], message: VERSIONED_TTL_MESSAGE });
    if (ttlOption === 'default_time_to_live')
      problems.push({ path: ['pipelines', i, 'store', 'tableOptions', 'default_time_to_live'], message: VERSIONED_TTL_MESSAGE });
    // Table options and store names get the store layer's strict validation here, so `adjunct validate` and the
    // worker reject CQL injection before anything connects.
    try {
      renderTableOptions(p.store.tableOptions as TableOptions | undefined, p.store.ttlSeconds);
    } catch (e) {
      problems.push({ path: ['pipelines', i, 'store', 'tableOptions'], message: (e as Error).message });
    }
    try {
      tableNameForStore(p.store.name);
    } catch (e) {
      problems.push({ path: ['pipelines', i, 'store', 'name'], message: (e as Error).message });
    }
    for (const fp of fieldPathsOf(p)) {
      try {
        parseFieldPath(fp.text);
      } catch (e) {
        problems.push({ path: ['pipelines', i, 'extract', ...fp.at], message: (e as Error).message });
      }
    }
    problems.push(...checkTypedColumns(p, i));
    const ts = p.extract.timestamp;
    if (ts?.from === 'field' && !ts.path)
      problems.push({ path: ['pipelines', i, 'extract', 'timestamp', 'path'], message: 'timestamp.from=field needs a path' });
    if (ts?.from === 'header' && !ts.header)
      problems.push({ path: ['pipelines', i, 'extract', 'timestamp', 'header'], message: 'timestamp.from=header needs a header name' });
    if (p.extract.key?.path && p.extract.key.fields)
      problems.push({ path: ['pipelines', i, 'extract', 'key'], message: 'use either key.path or key.fields, not both' });
    if (p.extract.module && (p.extract.key || p.extract.value || p.extract.preset !== 'none')) {
      problems.push({
        path: ['pipelines', i, 'extract', 'module'],
        message: 'a custom extractor module replaces key/value/preset settings; remove them',
      });
    }
  });
  // Cycles in dependsOn.
  const visiting = new Set<string>();
  const done = new Set<string>();
  const byName = new Map(cfg.pipelines.map((p, i) => [p.name, { p, i }]));
  const visit = (n: string, trail: string[]): void => {
    if (done.has(n)) return;
    if (visiting.has(n)) {
      const e = byName.get(n)!;
      problems.push({ path: ['pipelines', e.i, 'dependsOn'], message: `dependency cycle: ${[...trail, n].join(' -> ')}` });
      return;
    }
    visiting.add(n);
    for (const d of byName.get(n)?.p.dependsOn ?? []) if (byName.has(d)) visit(d, [...trail, n]);
    visiting.delete(n);
    done.add(n);
  };
  for (const p of cfg.pipelines) visit(p.name, []);
  return problems;
}

/** Every field path of a pipeline's extract section, with its YAML path below `extract`. */
function fieldPathsOf(p: AdjunctConfig['pipelines'][number]): { at: (string | number)[]; text: string }[] {
  const e = p.extract ?? {};
  const out: { at: (string | number)[]; text: string }[] = [];
  const add = (at: (string | number)[], text: unknown) => {
    if (typeof text === 'string') out.push({ at, text });
  };
  add(['key', 'path'], e.key?.path);
  (e.key?.fields ?? []).forEach((f, j) => add(['key', 'fields', j], f));
  add(['value', 'path'], e.value?.path);
  (e.value?.project ?? []).forEach((f, j) => add(['value', 'project', j], f));
  add(['timestamp', 'path'], e.timestamp?.path);
  (Array.isArray(e.filter) ? e.filter : []).forEach((f, j) => add(['filter', j, 'path'], f?.path));
  return out;
}

/**
 * Different store names that map to the same Cassandra base table (normalisation lower-cases and turns `.`/`-` into
 * `_`): they would write into one table, so each such pair is a problem at the later store's YAML path.
 */
export function storeTableCollisions(pipelines: ReadonlyArray<{ store: { name: string } }>): CrossProblem[] {
  const problems: CrossProblem[] = [];
  const owners = new Map<string, { name: string; index: number }>();
  pipelines.forEach((p, i) => {
    const name = p?.store?.name;
    let table: string;
    try {
      table = baseTableForStore(name);
    } catch {
      return; // an invalid name is reported on its own
    }
    const first = owners.get(table);
    if (first === undefined) owners.set(table, { name, index: i });
    else if (first.name !== name) {
      problems.push({
        path: ['pipelines', i, 'store', 'name'],
        message: `store "${name}" and store "${first.name}" (pipelines[${first.index}].store.name) both map to Cassandra table "${table}"; rename one of them`,
      });
    }
  });
  return problems;
}
