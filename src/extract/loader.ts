import * as path from 'path';
import type { ExtractSpec } from '../config/schema';
import { ConfigError } from '../errors';
import { BuiltinExtractor } from './builtin-extractor';
import { DebeziumExtractor } from './debezium-extractor';
import { Extractor, ExtractorFactory } from './extractor';

/** Loads a custom extractor module (JS or TS): it exports `createExtractor(options)`, a default factory, or an `extract` function. */
export async function loadCustomExtractor(modulePath: string, baseDir: string, options: Record<string, unknown> = {}): Promise<Extractor> {
  const resolved = path.resolve(baseDir, modulePath);
  let mod: any;
  try {
    // A TypeScript module loads directly where a TS loader is registered (tsx, jest); otherwise through tsx's API.
    if (/\.(c|m)?ts$/.test(resolved) && !(require.extensions as Record<string, unknown>)['.ts'] && !process.env.JEST_WORKER_ID) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const tsx = require('tsx/cjs/api') as { require: (id: string, from: string) => unknown };
      mod = tsx.require(resolved, __filename);
    } else {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      mod = require(resolved);
    }
  } catch (e) {
    throw new ConfigError(`cannot load extractor module ${resolved}: ${(e as Error).message}`, { cause: e, context: { module: resolved } });
  }
  const factory: ExtractorFactory | undefined =
    typeof mod?.createExtractor === 'function' ? mod.createExtractor : typeof mod?.default === 'function' ? mod.default : typeof mod?.default?.createExtractor === 'function' ? mod.default.createExtractor : undefined;
  const ex: Extractor | undefined = factory ? await factory(options) : typeof mod?.extract === 'function' ? mod : typeof mod?.default?.extract === 'function' ? mod.default : undefined;
  if (!ex || typeof ex.extract !== 'function') {
    throw new ConfigError(`extractor module ${resolved} must export createExtractor(options), a default factory, or an extract(record) function`);
  }
  return ex;
}

/** Builds the extractor a pipeline's `extract` section describes. */
export async function createExtractor(spec: ExtractSpec, baseDir: string): Promise<Extractor> {
  if (spec.module) return loadCustomExtractor(spec.module, baseDir, spec.options ?? {});
  if (spec.preset === 'debezium') return new DebeziumExtractor(spec);
  return new BuiltinExtractor(spec);
}
