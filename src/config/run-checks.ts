import * as fs from 'fs';
import * as path from 'path';
import { closest, distance } from 'fastest-levenshtein';
import { isLoopbackHost } from '../http/auth';
import { CrossProblem } from './cross-check';
import { configJsonSchema } from './json-schema';
import { AdjunctConfig } from './schema';

type Json = Record<string, any>;

/** Store options that only apply to one kind of store. */
const VERSIONED_ONLY = ['historyRetention'] as const;

/** Key serdes and the converters whose whole-record output they can hold (without key extraction). */
const KEY_SERDE_CONVERTERS: Record<string, ReadonlySet<string>> = {
  int64: new Set(['json', 'avro', 'json-schema', 'protobuf']),
  buffer: new Set(['bytes']),
};

/**
 * What `run` would reject beyond the schema and cross-field rules: options that do not apply, key serdes the key
 * converter cannot feed, and custom extractor modules that do not exist. `raw` is the document before defaults.
 */
export function runChecks(cfg: AdjunctConfig, raw: unknown, baseDir: string): CrossProblem[] {
  const problems: CrossProblem[] = [];
  const rawPipelines = ((raw as Json)?.pipelines ?? []) as Json[];
  cfg.pipelines.forEach((p, i) => {
    const rawStore = (rawPipelines[i]?.store ?? {}) as Json;
    if (p.store.kind !== 'versioned') {
      for (const k of VERSIONED_ONLY)
        if (k in rawStore)
          problems.push({
            path: ['pipelines', i, 'store', k],
            message: `${k} applies only to versioned stores; this store is kind ${p.store.kind}`,
          });
    }
    if (p.extract.options && !p.extract.module)
      problems.push({ path: ['pipelines', i, 'extract', 'options'], message: 'extract.options applies only to a custom extractor module' });
    const keySerde = p.store.keySerde;
    const fits = keySerde ? KEY_SERDE_CONVERTERS[keySerde] : undefined;
    const keyExtracted = Boolean(p.extract.key || p.extract.module || p.extract.preset !== 'none');
    if (fits && !keyExtracted && !fits.has(p.keyConverter)) {
      problems.push({
        path: ['pipelines', i, 'store', 'keySerde'],
        message: `keySerde ${keySerde} cannot hold the keys keyConverter ${p.keyConverter} produces (use ${[...fits].join(', ')}, or extract.key)`,
      });
    }
    if (p.extract.module) {
      const resolved = path.resolve(baseDir, p.extract.module);
      const candidates = [resolved, ...['.js', '.cjs', '.mjs', '.ts'].map((e) => resolved + e)];
      if (!candidates.some((c) => fs.existsSync(c) && fs.statSync(c).isFile())) {
        problems.push({
          path: ['pipelines', i, 'extract', 'module'],
          message: `extractor module ${JSON.stringify(p.extract.module)} not found (resolved to ${resolved})`,
        });
      }
    }
  });
  return problems;
}

/**
 * Settings `run` accepts but an operator should know about: a public bind without an admin token (the admin routes are
 * off) and deprecated settings that no longer have an effect.
 */
export function configWarnings(cfg: AdjunctConfig): CrossProblem[] {
  const warnings: CrossProblem[] = [];
  const h = cfg.worker.http;
  if (h.enabled && !isLoopbackHost(h.host) && !h.adminToken) {
    warnings.push({
      path: ['worker', 'http', 'adminToken'],
      message: `worker.http.host ${JSON.stringify(h.host)} is not loopback and no adminToken is set: the admin routes will be off`,
    });
  }
  return [...warnings, ...deprecationWarnings(cfg)];
}

/** Deprecated settings that are still accepted but no longer have an effect (the worker logs them at start). */
export function deprecationWarnings(cfg: AdjunctConfig): CrossProblem[] {
  const warnings: CrossProblem[] = [];
  cfg.pipelines.forEach((p, i) => {
    if (p.store.cleanupEvery !== undefined) {
      warnings.push({
        path: ['pipelines', i, 'store', 'cleanupEvery'],
        message:
          'is deprecated and has no effect: expired versions are removed by blind range deletes, about one per key per retention period',
      });
    }
  });
  return warnings;
}

/** The keys the schema allows at a YAML path (for "did you mean"); empty when the path is not an object. */
export function knownKeysAt(yamlPath: readonly PropertyKey[]): string[] {
  const root = configJsonSchema() as Json;
  const resolve = (n: Json | undefined): Json | undefined => {
    if (!n) return n;
    if (typeof n.$ref === 'string')
      return resolve(
        n.$ref
          .replace(/^#\//, '')
          .split('/')
          .reduce((cur: Json, seg: string) => cur?.[seg], root),
      );
    return n;
  };
  const objects = (n: Json | undefined): Json[] => {
    const r = resolve(n);
    if (!r) return [];
    if (r.properties) return [r];
    return ((r.anyOf ?? r.oneOf ?? []) as Json[]).flatMap(objects);
  };
  let nodes: Json[] = [root];
  for (const seg of yamlPath) {
    nodes = nodes.flatMap((n) => {
      const r = resolve(n);
      if (!r) return [];
      if (typeof seg === 'number') return [r.items, ...((r.anyOf ?? []) as Json[]).map((v) => resolve(v)?.items)].filter(Boolean) as Json[];
      return objects(r)
        .map((o) => o.properties?.[String(seg)])
        .filter(Boolean) as Json[];
    });
  }
  return [...new Set(nodes.flatMap(objects).flatMap((o) => Object.keys(o.properties)))];
}

/** The known key closest to an unknown one, when it is a plausible typo. */
export function suggestKey(unknown: string, known: string[]): string | undefined {
  if (known.length === 0) return undefined;
  const best = closest(unknown, known);
  return distance(unknown.toLowerCase(), best.toLowerCase()) <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}
