import * as fs from 'fs';
import * as path from 'path';
import { isScalar, LineCounter, parseDocument, visit } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../errors';
import { interpolateEnv } from './interpolate';
import { AdjunctConfig, AdjunctConfigSchema, ReadConfig, ReadConfigSchema } from './schema';
import { crossCheck } from './cross-check';
import { knownKeysAt, runChecks, suggestKey } from './run-checks';

/** One configuration problem, located by YAML path and line. */
export interface ConfigProblem {
  path: string;
  line?: number;
  column?: number;
  message: string;
}

/** A loaded, validated configuration plus where it came from. */
export interface LoadedConfig {
  config: AdjunctConfig;
  file?: string;
  baseDir: string;
}

/** Thrown when a configuration has problems; lists every one of them. */
export class ConfigValidationError extends ConfigError {
  readonly problems: ConfigProblem[];
  constructor(problems: ConfigProblem[], file?: string) {
    const where = file ? ` in ${file}` : '';
    super(`${problems.length} configuration problem(s)${where}:\n` + problems.map(formatProblem).join('\n'), {
      code: 'CONFIG_INVALID',
      context: { file, problems },
    });
    this.problems = problems;
  }
}

/** Formats a problem as `path (line L:C): message`. */
export function formatProblem(p: ConfigProblem): string {
  const loc = p.line !== undefined ? ` (line ${p.line}${p.column !== undefined ? `:${p.column}` : ''})` : '';
  return `  - ${p.path || '<root>'}${loc}: ${p.message}`;
}

/** Renders a path array as `pipelines[0].store.name`. */
export function pathToString(p: ReadonlyArray<PropertyKey>): string {
  return p.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc ? `${acc}.${String(seg)}` : String(seg)), '');
}

/** Parses and validates YAML text; throws ConfigValidationError listing every problem with its YAML path and line. */
export function parseConfig(text: string, options: { file?: string; env?: NodeJS.ProcessEnv } = {}): AdjunctConfig {
  return validateConfig(text, AdjunctConfigSchema, options, true);
}

/** Parses and validates the parts of a config the read commands use (a config holding only `cassandra` is enough). */
export function parseReadConfig(text: string, options: { file?: string; env?: NodeJS.ProcessEnv } = {}): ReadConfig {
  return validateConfig(text, ReadConfigSchema, options, false);
}

function validateConfig<S extends z.ZodType>(
  text: string,
  schema: S,
  options: { file?: string; env?: NodeJS.ProcessEnv },
  crossChecks: boolean,
): z.output<S> {
  const env = options.env ?? process.env;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const problems: ConfigProblem[] = [];
  const locate = (offset: number | undefined) => {
    if (offset === undefined) return {};
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  for (const err of doc.errors) {
    problems.push({ path: '', ...locate(err.pos?.[0]), message: `YAML syntax: ${withoutSourceText(err.message, text)}` });
  }
  // A value starting with "!" is a tag; an unknown one would silently keep only the rest of the value.
  for (const w of doc.warnings) {
    const message =
      w.code === 'TAG_RESOLVE_FAILED'
        ? 'an unquoted value starting with "!" is a YAML tag, and not a known one: quote the value'
        : withoutSourceText(w.message, text);
    problems.push({ path: '', ...locate(w.pos?.[0]), message: `YAML: ${message}` });
  }
  if (problems.length) throw new ConfigValidationError(problems, options.file);

  const interpolatedText = new Map<unknown, string>();
  visit(doc, {
    Scalar(_key, node, visitPath) {
      if (typeof node.value !== 'string' || !node.value.includes('${')) return;
      const { value, missing } = interpolateEnv(node.value, env);
      for (const m of missing) {
        problems.push({
          path: pathToString(yamlPathOf(visitPath, node)),
          ...locate(node.range?.[0]),
          message: `environment variable ${m.name} is not set and has no default (use \${${m.name}:-default})`,
        });
      }
      // An unquoted scalar keeps YAML's typing after interpolation (`port: ${PORT:-8080}` is a number); where the
      // schema wants text (`password: ${PW}` with PW=007), the interpolated text is put back below, digits intact.
      node.value = node.type === 'PLAIN' ? coercePlain(value) : value;
      if (typeof node.value !== 'string') interpolatedText.set(node, value);
    },
  });

  // An unquoted value starting with `*` is a YAML alias: one naming no anchor fails in toJS with the name in the
  // message, and that name may be a secret (`password: *x9…`). Report where it is, never what it says.
  visit(doc, {
    Alias(_key, node, visitPath) {
      if (node.resolve(doc) !== undefined) return;
      problems.push({
        path: pathToString(yamlPathOf(visitPath, node)),
        ...locate(node.range?.[0]),
        message: 'an unquoted value starting with "*" is a YAML alias, and no anchor of that name is defined: quote the value',
      });
    },
  });
  if (problems.length) throw new ConfigValidationError(problems, options.file);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch {
    throw new ConfigValidationError(
      [{ path: '', message: 'YAML aliases expand too far (more than 100 alias nodes): the document is refused' }],
      options.file,
    );
  }
  let result = schema.safeParse(data ?? {});
  if (!result.success && interpolatedText.size > 0) {
    let retyped = false;
    for (const issue of result.error.issues) {
      if (issue.code !== 'invalid_type' || issue.expected !== 'string') continue;
      const node = doc.getIn(issue.path as unknown[], true) as { value?: unknown } | undefined;
      const text = node === undefined ? undefined : interpolatedText.get(node);
      if (node === undefined || text === undefined) continue;
      node.value = text;
      retyped = true;
    }
    if (retyped) {
      data = doc.toJS({ maxAliasCount: 100 });
      result = schema.safeParse(data ?? {});
    }
  }
  let cross: ReturnType<typeof crossCheck> = [];
  if (!crossChecks) {
    if (!result.success) for (const issue of result.error.issues) problems.push(...issueToProblems(issue, doc, locate));
  } else if (!result.success) {
    for (const issue of result.error.issues) problems.push(...issueToProblems(issue, doc, locate));
    // Report the cross-field problems in the same round where the raw document allows it (best effort).
    try {
      cross = Array.isArray((data as { pipelines?: unknown })?.pipelines) ? crossCheck(withDefaults(data)) : [];
    } catch {
      cross = [];
    }
  } else {
    cross = crossCheck(result.data as AdjunctConfig);
    cross.push(...runChecks(result.data as AdjunctConfig, data, options.file ? path.dirname(path.resolve(options.file)) : process.cwd()));
  }
  const reported = new Set(problems.map((p) => p.path));
  // A value that should have been an object or a list and is not: nothing under it is worth a second message.
  const notContainers = problems.filter((p) => /expected (object|array|record)/.test(p.message)).map((p) => p.path);
  const explained = (path: string) => reported.has(path) || notContainers.some((r) => path.startsWith(`${r}.`) || path.startsWith(`${r}[`));
  for (const p of cross) {
    const path = pathToString(p.path);
    if (explained(path)) continue;
    const node = doc.getIn(p.path, true) as { range?: [number, number, number] } | undefined;
    problems.push({ path, ...locate(node?.range?.[0]), message: p.message });
  }
  if (problems.length) throw new ConfigValidationError(sortByLine(problems), options.file);
  return (result as { data: z.output<S> }).data;
}

/**
 * A YAML parser message without the source text it quotes (`Block scalar header includes extra characters: |x9…`):
 * the quoted text may be a secret, and the line number already says where.
 */
function withoutSourceText(message: string, source: string): string {
  const first = message.split('\n')[0];
  const cut = first.lastIndexOf(': ');
  return cut >= 0 && first.length - cut > 3 && source.includes(first.slice(cut + 2)) ? first.slice(0, cut) : first;
}

/** Fills the defaults cross-checks rely on into a raw (schema-invalid) document. */
function withDefaults(data: unknown): AdjunctConfig {
  const d = data as { pipelines: Record<string, any>[] };
  return {
    ...(data as object),
    pipelines: d.pipelines.map((p) => ({
      ...p,
      dependsOn: Array.isArray(p?.dependsOn) ? p.dependsOn : [],
      extract: { preset: 'none', ...(p?.extract ?? {}) },
      errors: { tolerance: 'none', ...(p?.errors ?? {}) },
      store: { ...(p?.store ?? {}) },
      bootstrap: p?.bootstrap === true,
    })),
  } as unknown as AdjunctConfig;
}

/** Problems in document order (by line, then column); problems without a line come last. */
function sortByLine(problems: ConfigProblem[]): ConfigProblem[] {
  const at = (p: ConfigProblem) => (p.line ?? Number.MAX_SAFE_INTEGER) * 10_000 + (p.column ?? 0);
  return [...problems].sort((a, b) => at(a) - at(b));
}

function issueToProblems(
  issue: z.core.$ZodIssue,
  doc: ReturnType<typeof parseDocument>,
  locate: (o?: number) => { line?: number; column?: number },
): ConfigProblem[] {
  const p = issue.path as PropertyKey[];
  if (issue.code === 'unrecognized_keys') {
    // One problem per unknown key, at the key's own line, with the closest known key as a suggestion.
    const parent = doc.getIn(p as unknown[], true) as
      { items?: { key: { value?: unknown; range?: [number, number, number] } }[]; range?: [number, number, number] } | undefined;
    const known = knownKeysAt(p);
    return issue.keys.map((k) => {
      const keyNode = parent?.items?.find((it) => String(it.key?.value) === k)?.key;
      const hint = suggestKey(k, known);
      return {
        path: pathToString(p),
        ...locate((keyNode?.range ?? parent?.range)?.[0]),
        message: `unknown key(s): ${k}${hint ? ` (did you mean "${hint}"?)` : ''}`,
      };
    });
  }
  let node: unknown = undefined;
  // Walk up until a node exists (missing keys are reported at their parent).
  let exists = true;
  for (let i = p.length; i >= 0 && node === undefined; i--) {
    node = i === 0 ? doc.contents : doc.getIn(p.slice(0, i) as unknown[], true);
    if (node === undefined) exists = false;
  }
  const missing = !exists && issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  const scalarForText = issue.code === 'invalid_type' && issue.expected === 'string' && /received (number|boolean)$/.test(issue.message);
  const message = missing
    ? `required (${issue.message.replace(/^Invalid input: /, '').replace(/, received undefined$/, '')})`
    : scalarForText
      ? `${issue.message} (YAML reads an unquoted 123 or true as a number or boolean: quote the value)`
      : issue.message;
  const range = (node as { range?: [number, number, number] } | undefined)?.range;
  return [{ path: pathToString(p), ...locate(range?.[0]), message }];
}

function yamlPathOf(visitPath: readonly unknown[], node: unknown): (string | number)[] {
  const out: (string | number)[] = [];
  const chain = [...visitPath, node];
  for (let i = 1; i < chain.length; i++) {
    const parent = chain[i - 1] as { items?: unknown[] };
    const child = chain[i] as { key?: unknown; value?: unknown };
    if (Array.isArray(parent?.items)) {
      const idx = parent.items.indexOf(child);
      if (idx >= 0 && !('key' in (child as object))) out.push(idx);
    }
    if (child && typeof child === 'object' && 'key' in child && isScalar(child.key)) out.push(String(child.key.value));
  }
  return out;
}

function coercePlain(v: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (v === 'true' || v === 'false') return v === 'true';
  return v;
}

/** Reads, interpolates and validates a YAML config file. */
export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  return { config: parseConfig(readConfigText(file), { file, env }), file, baseDir: path.dirname(path.resolve(file)) };
}

/** Reads and validates a config file for the read commands (see ReadConfigSchema). */
export function loadReadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): { config: ReadConfig; file: string } {
  return { config: parseReadConfig(readConfigText(file), { file, env }), file };
}

function readConfigText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${file}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`, {
      cause: e,
      context: { file },
    });
  }
}
