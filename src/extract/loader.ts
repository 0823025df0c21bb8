import * as path from 'path';
import type { ExtractSpec } from '../config/schema';
import { ConfigError } from '../errors';
import { BuiltinExtractor } from './builtin-extractor';
import { DebeziumExtractor } from './debezium-extractor';
import { DepthLimitedExtractor } from './depth-limit';
import { Extractor, ExtractorFactory } from './extractor';

/** Requires a module; a TypeScript file that plain `require` cannot compile goes through tsx (none registered). */
function requireModule(file: string): any {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(file);
  } catch (e) {
    if (!/\.(c|m)?ts$/.test(file) || !(e instanceof SyntaxError || (e as { code?: string }).code === 'ERR_REQUIRE_ESM')) throw e;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('tsx/cjs/api') as { require: (id: string, from: string) => unknown }).require(file, __filename);
  }
}

/** Loads a custom extractor module (JS or TS): it exports `createExtractor(options)`, a default factory, or an `extract` function. */
export async function loadCustomExtractor(modulePath: string, baseDir: string, options: Record<string, unknown> = {}): Promise<Extractor> {
  const resolved = path.resolve(baseDir, modulePath);
  let mod: any;
  try {
    mod = requireModule(resolved);
  } catch (e) {
    throw new ConfigError(`cannot load extractor module ${resolved}: ${(e as Error).message}`, { cause: e, context: { module: resolved } });
  }
  const factory = [mod?.createExtractor, mod?.default?.createExtractor, mod?.default].find(
    (f): f is ExtractorFactory => typeof f === 'function',
  );
  const ex: Extractor | undefined = factory ? await factory(options) : [mod, mod?.default].find((m) => typeof m?.extract === 'function');
  if (!ex || typeof ex.extract !== 'function') {
    throw new ConfigError(
      `extractor module ${resolved} must export createExtractor(options), a default factory, or an extract(record) function`,
    );
  }
  return ex;
}

/** Builds the extractor a pipeline's `extract` section describes; keys and values deeper than MAX_VALUE_DEPTH are bad records. */
export async function createExtractor(spec: ExtractSpec, baseDir: string): Promise<Extractor> {
  return new DepthLimitedExtractor(await createInnerExtractor(spec, baseDir));
}

async function createInnerExtractor(spec: ExtractSpec, baseDir: string): Promise<Extractor> {
  if (spec.module) return loadCustomExtractor(spec.module, baseDir, spec.options ?? {});
  if (spec.preset === 'debezium') return new DebeziumExtractor(spec);
  return new BuiltinExtractor(spec);
}
