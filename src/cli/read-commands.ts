import { Command, Option } from 'commander';
import { loadReadConfigFile, ReadConfig } from '../config';
import { AdjunctError, describeError, ErrorCode, publicError } from '../errors';
import { AdminAction, catalogAdmin, hasPipeline } from './catalog-admin';
import { Exit, ExitCode, exitCodeOfError } from './exit-codes';

/** A CLI failure carrying its exit code. */
class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: Exit,
    readonly code: CliFailureCode = CLI_FAILURE_CODES[exitCode],
  ) {
    super(message);
  }
}

/** The code a CLI failure reports in --json output: the error table's code where one applies, else the exit's name. */
type CliFailureCode = 'OK' | 'FAILED' | 'UNAVAILABLE' | ErrorCode;

/** The error code a CLI failure reports in --json output, per exit code. */
const CLI_FAILURE_CODES: Record<Exit, CliFailureCode> = { 0: 'OK', 1: 'FAILED', 2: 'CONFIG_INVALID', 3: 'NOT_FOUND', 4: 'UNAVAILABLE' };

const DEFAULT_URL = 'http://127.0.0.1:8080';

/** Exit code for an error: CONFIG_INVALID, NOT_FOUND for unknown stores/pipelines/keys, UNAVAILABLE when a service cannot be reached. */
function exitCodeOf(e: unknown): Exit {
  return e instanceof CliFailure ? e.exitCode : exitCodeOfError(e);
}

/** The machine-readable code of a CLI failure. */
function errorCodeOf(e: unknown): string {
  if (e instanceof CliFailure) return e.code;
  if (e instanceof AdjunctError) return e.code;
  return 'FAILED';
}

/** Runs a command body, mapping failures to a message on stderr and an exit code. */
function action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
      if (process.exitCode === undefined) process.exitCode = ExitCode.OK;
    } catch (e) {
      process.exitCode = exitCodeOf(e);
      const opts = args.find((a): a is { json?: boolean } => typeof a === 'object' && a !== null && !Array.isArray(a) && 'json' in a);
      if (opts?.json)
        printJson({
          error: errorCodeOf(e),
          message: e instanceof CliFailure ? e.message : e instanceof AdjunctError ? e.message : publicError(e).message,
          exitCode: process.exitCode,
        });
      else process.stderr.write(`adjunct: ${e instanceof CliFailure || e instanceof AdjunctError ? e.message : describeError(e)}\n`);
    }
  };
}

/** Renders rows as an aligned text table. */
function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cell = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

function printJson(v: unknown): void {
  process.stdout.write(`${JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x), 2)}\n`);
}

/** Parses a timestamp option: epoch milliseconds or an ISO-8601 date. */
function parseTime(v: string): number {
  if (/^\d+$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t) || t < 0)
    throw new CliFailure(`invalid time ${JSON.stringify(v)}: use epoch milliseconds or an ISO-8601 date`, ExitCode.FAILED);
  return t;
}

/** Epoch milliseconds as ISO-8601 (empty for undefined/null, the number itself when out of Date's range). */
function iso(t: number | null | undefined): string {
  if (t === undefined || t === null || !Number.isFinite(t)) return '';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString();
}

/** Opens a Lookup from a config's cassandra section (UNAVAILABLE when Cassandra cannot be reached). */
async function withLookup<T>(
  configFile: string,
  fn: (l: import('../lookup').Lookup, cfg: { config: ReadConfig }) => Promise<T>,
): Promise<T> {
  const loaded = loadReadConfigFile(configFile);
  const { createCassandra } = await import('../worker/clients');
  const { openLookup } = await import('../lookup');
  const cfg = loaded.config.cassandra;
  const client = createCassandra(cfg);
  try {
    const lookup = await openLookup({ client, keyspace: cfg.keyspace, readConsistency: cfg.readConsistency });
    return await fn(lookup, loaded);
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

/** Calls the worker's HTTP API; UNAVAILABLE when unreachable, NOT_FOUND on 404, FAILED on other errors. */
async function callApi(base: string, method: 'GET' | 'POST', path: string, token?: string, payload?: unknown): Promise<unknown> {
  let url: URL;
  try {
    url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  } catch {
    throw new CliFailure(`invalid --url ${JSON.stringify(base)}`, ExitCode.FAILED);
  }
  let res: Response;
  try {
    const headers: Record<string, string> = {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    };
    res = await fetch(url, {
      method,
      headers,
      body: payload === undefined ? undefined : JSON.stringify(payload),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    const c = (e as { cause?: { code?: string; message?: string } }).cause;
    const cause = c?.code ?? c?.message ?? describeError(e);
    throw new CliFailure(`cannot reach the adjunct HTTP API at ${url.origin} (${cause})`, ExitCode.UNAVAILABLE);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  if (res.ok) return body;
  const msg =
    typeof body === 'object' && body !== null && 'message' in body ? String((body as { message: unknown }).message) : text.slice(0, 200);
  if (res.status === 404) throw new CliFailure(msg, ExitCode.NOT_FOUND);
  if (res.status === 503) throw new CliFailure(msg, ExitCode.UNAVAILABLE);
  if (res.status === 401) throw new CliFailure(`${msg} (pass --token or set ADJUNCT_ADMIN_TOKEN)`, ExitCode.FAILED);
  throw new CliFailure(`HTTP ${res.status}: ${msg}`, ExitCode.FAILED);
}

interface StatusOpts {
  url: string;
  config?: string;
  json?: boolean;
}

async function statusCommand(o: StatusOpts): Promise<void> {
  if (o.config) {
    const out = await withLookup(o.config, async (l, loaded) => {
      const bootstrap = loaded.config.pipelines.filter((p) => p.bootstrap).map((p) => p.name);
      const stores = await l.stores();
      const horizons = await Promise.all(stores.map(async (s) => ({ store: s.name, writers: await l.store(s.name).horizons() })));
      const { WorkerRegistry } = await import('../generations');
      const workers = await new WorkerRegistry(l.client, loaded.config.cassandra.keyspace).all();
      return { stores, readiness: await l.readiness(bootstrap), horizons, workers };
    });
    if (o.json) return printJson(out);
    const stores = out.stores.map((s) => ({
      store: s.name,
      kind: s.kind,
      scope: s.scope,
      gen: s.generation,
      building: s.buildingGeneration,
      previous: s.previousGeneration,
      keys: s.keySerde,
      values: s.valueSerde,
      table: s.table,
    }));
    process.stdout.write(
      `STORES\n${table(stores, ['store', 'kind', 'scope', 'gen', 'building', 'previous', 'keys', 'values', 'table'])}\n\n`,
    );
    process.stdout.write(
      `BOOTSTRAP PIPELINES (${out.readiness.ready ? 'all READY' : `not ready: ${out.readiness.notReady.join(', ')}`})\n`,
    );
    const pipes = out.readiness.pipelines.map((p) => ({
      pipeline: p.pipeline,
      store: p.store,
      gen: p.generation,
      state: p.state,
      records: `${p.recordsDone}/${p.recordsTotal}`,
    }));
    process.stdout.write(`${table(pipes, ['pipeline', 'store', 'gen', 'state', 'records'])}\n`);
    const writers = out.horizons.flatMap((h) =>
      h.writers.map((w) => ({ store: h.store, writer: w.writer, streamTime: iso(w.streamTime), horizon: iso(w.horizon) })),
    );
    const live = out.workers.map((w) => ({
      pipeline: w.pipeline,
      worker: w.worker,
      generation: w.generation,
      role: w.role,
      heartbeat: w.updatedAt?.toISOString(),
    }));
    process.stdout.write(
      `\nLIVE WORKERS (heartbeat within the TTL)\n${table(live, ['pipeline', 'worker', 'generation', 'role', 'heartbeat'])}\n`,
    );
    if (writers.length)
      process.stdout.write(
        `\nSTREAM TIME AND RETENTION HORIZON PER PARTITION (as persisted at the last commit)\n${table(writers, ['store', 'writer', 'streamTime', 'horizon'])}\n`,
      );
    return;
  }
  const st = (await callApi(o.url, 'GET', 'status')) as Record<string, unknown>;
  if (o.json) return printJson(st);
  if (Array.isArray(st.pipelines)) {
    process.stdout.write(`worker ${String(st.workerId)}  state ${String(st.state)}  started ${String(st.startedAt ?? '')}\n`);
    if (st.lastError) process.stdout.write(`last error: ${String(st.lastError)}\n`);
    const rows = (st.pipelines as Record<string, unknown>[]).map((p) => {
      const c = (p.counts ?? {}) as Record<string, unknown>;
      const b = p.bootstrap as { state?: string; done?: number; total?: number } | undefined;
      return {
        ...p,
        consumed: c.consumed,
        written: c.written,
        deadLettered: c.deadLettered,
        bootstrap: b ? `${b.state} ${b.done}/${b.total}` : '-',
      };
    });
    process.stdout.write(`${table(rows, ['name', 'state', 'store', 'generation', 'consumed', 'written', 'deadLettered', 'bootstrap'])}\n`);
    const live = (st.pipelines as { name: string; writers?: Record<string, unknown>[] }[]).flatMap((p) =>
      (p.writers ?? []).map((w) => ({ pipeline: p.name, worker: w.worker, generation: w.generation, role: w.role })),
    );
    if (live.length) process.stdout.write(`\nLIVE WORKERS\n${table(live, ['pipeline', 'worker', 'generation', 'role'])}\n`);
    const parts = (st.pipelines as { name: string; partitions?: Record<string, unknown>[] }[]).flatMap((p) =>
      (p.partitions ?? []).map((x) => ({
        pipeline: p.name,
        partition: `${String(x.topic)}/${String(x.partition)}`,
        committed: x.committedOffset,
        lag: x.lag,
        streamTime: iso(x.observedStreamTime as number | null),
        horizon: iso(x.horizon as number | null),
      })),
    );
    if (parts.length)
      process.stdout.write(`\nPARTITIONS\n${table(parts, ['pipeline', 'partition', 'committed', 'lag', 'streamTime', 'horizon'])}\n`);
  } else {
    printJson(st);
  }
}

interface LookupOpts {
  config: string;
  asOf?: string;
  history?: boolean;
  from?: string;
  to?: string;
  order?: 'asc' | 'desc';
  partition?: string;
  json?: boolean;
}

async function lookupCommand(storeName: string, keyText: string, o: LookupOpts): Promise<void> {
  const { parseKeyText, toJsonValue } = await import('../lookup');
  const partition = o.partition === undefined ? undefined : Number(o.partition);
  if (partition !== undefined && !Number.isInteger(partition)) throw new CliFailure(`invalid --partition ${o.partition}`, ExitCode.FAILED);
  await withLookup(o.config, async (l) => {
    const store = await l.store(storeName).pinned();
    const info = await store.info();
    const key = parseKeyText(info.keySerde, keyText);
    if (o.history) {
      const versions = await store.history(
        key,
        {
          fromTime: o.from === undefined ? undefined : parseTime(o.from),
          toTime: o.to === undefined ? undefined : parseTime(o.to),
          order: o.order,
        },
        { partition },
      );
      const rows = versions.map((v) => ({
        timestamp: v.timestamp,
        validTo: v.validTo,
        validFrom: iso(v.timestamp),
        validUntil: iso(v.validTo),
        value: toJsonValue(v.value),
      }));
      if (o.json)
        printJson({
          store: info.name,
          key: toJsonValue(key),
          generation: info.generation,
          versions: rows.map(({ validFrom: _f, validUntil: _u, ...r }) => r),
        });
      else process.stdout.write(`${table(rows, ['validFrom', 'validUntil', 'timestamp', 'validTo', 'value'])}\n`);
      if (versions.length === 0)
        throw new CliFailure(`no versions of key ${JSON.stringify(keyText)} in store ${info.name} in that window`, ExitCode.NOT_FOUND);
      return;
    }
    const asOf = o.asOf === undefined ? undefined : parseTime(o.asOf);
    const rec = await store.get(key, asOf, { partition });
    if (rec === null) throw new CliFailure(await notFoundMessage(store, key, keyText, info.name, asOf, partition), ExitCode.NOT_FOUND);
    const out = {
      store: info.name,
      key: toJsonValue(key),
      value: toJsonValue(rec.value),
      timestamp: rec.timestamp,
      validTo: rec.validTo,
      generation: info.generation,
    };
    if (o.json) return printJson(out);
    const until = rec.validTo === undefined ? ' (the latest version)' : ` until ${rec.validTo} (${iso(rec.validTo)})`;
    const when = rec.timestamp === undefined ? '' : `valid from ${rec.timestamp} (${iso(rec.timestamp)})${until}\n`;
    process.stdout.write(
      `${info.name} [${info.kind}, generation ${info.generation}] ${keyText}\n${when}${JSON.stringify(out.value, null, 2)}\n`,
    );
  });
}

/** Why a lookup found nothing; names the retention horizon when the as-of time lies below that of the key's partition. */
async function notFoundMessage(
  store: import('../lookup').StoreLookup<unknown, unknown>,
  key: unknown,
  keyText: string,
  storeName: string,
  asOf: number | undefined,
  partition: number | undefined,
): Promise<string> {
  const base = `key ${JSON.stringify(keyText)} not found in store ${storeName}`;
  if (asOf === undefined) return base;
  const at = `${base} as of ${asOf} (${iso(asOf)})`;
  if ((await store.info()).kind !== 'versioned') return at;
  const h = await store.horizonOf(key, { partition });
  if (h === null || asOf >= h.horizon) return at;
  return (
    `${at}: that is before the retention horizon ${h.horizon} (${iso(h.horizon)}) of partition ${h.writer} ` +
    `(stream time ${iso(h.streamTime)} minus historyRetention), where only the key's latest version can answer, and it is newer than ${iso(asOf)} or a tombstone`
  );
}

interface AdminOpts {
  url?: string;
  token?: string;
  config?: string;
  json?: boolean;
  to?: string;
  catalog?: boolean;
}

/** The worker's HTTP address from a config's worker.http (a wildcard bind is reached on loopback; https with tls). */
function workerUrlOf(config: ReadConfig): string {
  const h = config.worker.http;
  const host = h.host === '0.0.0.0' || h.host === '::' || h.host === '' ? '127.0.0.1' : h.host;
  return `${h.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${h.port}`;
}

/** Where an admin command goes and with which token: --url/--token first, then the config's worker.http, then the defaults. */
function adminTarget(o: AdminOpts): { url: string; token?: string } {
  const cfg = o.config ? loadReadConfigFile(o.config).config : undefined;
  return { url: o.url ?? (cfg ? workerUrlOf(cfg) : DEFAULT_URL), token: o.token || cfg?.worker.http.adminToken };
}

/**
 * Sends an admin action to a worker's API; with --catalog, or with -c when no worker answers, performs it in the
 * Cassandra catalog directly (reload/rollback/pause/resume): every worker follows the catalog within worker.generationPoll.
 */
async function adminCommand(actionName: AdminAction | 'restart', pipeline: string, o: AdminOpts): Promise<void> {
  const to = o.to === undefined ? undefined : Number(o.to);
  if (actionName === 'rollback' && (to === undefined || !Number.isInteger(to) || to < 1))
    throw new CliFailure('rollback needs --to <generation> (a positive integer)', ExitCode.FAILED);
  const inCatalog = (a: AdminAction) => catalogAdmin(o.config!, a, pipeline, to);
  let res: Record<string, unknown>;
  if (o.catalog && actionName !== 'restart') {
    if (!o.config) throw new CliFailure('--catalog needs -c <config>', ExitCode.FAILED);
    res = await inCatalog(actionName);
  } else {
    const target = adminTarget(o);
    try {
      res = (await callApi(
        target.url,
        'POST',
        `pipelines/${encodeURIComponent(pipeline)}/${actionName}`,
        target.token,
        actionName === 'rollback' ? { to } : undefined,
      )) as Record<string, unknown>;
    } catch (e) {
      if (!(
        e instanceof CliFailure &&
        e.exitCode === ExitCode.UNAVAILABLE &&
        o.config &&
        !o.url &&
        actionName !== 'restart' &&
        hasPipeline(o.config, pipeline)
      ))
        throw e;
      process.stderr.write(`adjunct: no worker answers at ${target.url}; ${actionName} done in the catalog, which every worker follows\n`);
      res = await inCatalog(actionName);
    }
  }
  if (o.json) return printJson(res);
  if (actionName === 'reload')
    process.stdout.write(
      `${pipeline}: building generation ${String(res.building)} from the earliest offset; every worker joins it; readers switch when it is READY\n`,
    );
  else if (actionName === 'rollback')
    process.stdout.write(
      res.changed === false
        ? `${pipeline}: generation ${String(res.current)} already current; nothing changed\n`
        : `${pipeline}: rolled back to generation ${String(res.current)} (generation ${String(res.previous)} kept as previous)\n`,
    );
  else if (actionName === 'restart') process.stdout.write(`${pipeline}: restarted (state ${String(res.state)})\n`);
  else process.stdout.write(`${pipeline}: ${actionName}d (state ${String(res.state)})\n`);
}

interface ServeOpts {
  config: string;
  port?: string;
  host?: string;
}

async function serveCommand(o: ServeOpts): Promise<void> {
  const cfg = loadReadConfigFile(o.config).config;
  const port = o.port === undefined ? cfg.worker.http.port : Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliFailure(`invalid --port ${o.port}`, ExitCode.CONFIG_INVALID);
  const settings = { ...cfg.worker.http, host: o.host ?? cfg.worker.http.host, port };
  const { createLogger } = await import('../observability/logger');
  const { createCassandra } = await import('../worker/clients');
  const { openLookup } = await import('../lookup');
  const { buildHttpServer, checkHttpSettings, listen } = await import('../http/server');
  checkHttpSettings(settings);
  const logger = createLogger(cfg.worker.logLevel);
  const client = createCassandra(cfg.cassandra);
  try {
    const lookup = await openLookup({ client, keyspace: cfg.cassandra.keyspace, readConsistency: cfg.cassandra.readConsistency });
    const expectedPipelines = cfg.pipelines.filter((p) => p.bootstrap).map((p) => p.name);
    const app = await buildHttpServer({ lookup, config: settings, logger, expectedPipelines });
    const address = await listen(app, settings);
    process.stdout.write(`adjunct serve: read-only HTTP API listening on ${address}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await app.close();
    await lookup.close();
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

/** Registers status/lookup/reload/rollback/pause/resume/serve (implemented with the lookup library and the HTTP API). */
export function registerReadCommands(program: Command): void {
  const urlOption = () => new Option('--url <url>', "base URL of a running worker's HTTP API").default(DEFAULT_URL);

  program
    .command('status')
    .description("show worker/pipeline status: from a running worker (--url), or from Cassandra's catalog and status tables (--config)")
    .addOption(urlOption())
    .option('-c, --config <file>', 'read the catalog and bootstrap status from Cassandra instead of a worker')
    .option('--json', 'machine-readable output')
    .action(action((o: StatusOpts) => statusCommand(o)));

  program
    .command('lookup <store> <key>')
    .description(
      "read a key (latest, --as-of, or --history); the key is text per the store's key serde (int64 as integer, json/tuple as JSON)",
    )
    .requiredOption('-c, --config <file>', 'config with the Cassandra settings (a config holding only `cassandra` is enough)')
    .option('--as-of <time>', 'the version valid at this time (epoch ms or ISO-8601)')
    .option('--history', 'every version valid in [--from, --to]')
    .option('--from <time>', 'history lower bound (epoch ms or ISO-8601)')
    .option('--to <time>', 'history upper bound (epoch ms or ISO-8601)')
    .addOption(new Option('--order <order>', 'history order').choices(['asc', 'desc']))
    .option('--partition <n>', 'partitioned stores: read only this source partition')
    .option('--json', 'machine-readable output')
    .action(action((store: string, key: string, o: LookupOpts) => lookupCommand(store, key, o)));

  for (const [name, description] of [
    ['reload', "rebuild a pipeline's store into a new generation from the earliest offset (readers switch when READY)"],
    ['rollback', "switch a pipeline's store back to generation --to (its previous one); idempotent"],
    ['pause', "pause a pipeline's consumption"],
    ['resume', 'resume a paused pipeline'],
    ['restart', 'restart a FAILED pipeline in place (the worker keeps running)'],
  ] as const) {
    program
      .command(`${name} <pipeline>`)
      .description(`${description} (admin API of a running worker)`)
      .addOption(new Option('--url <url>', `base URL of a running worker's HTTP API (default: worker.http of -c, else ${DEFAULT_URL})`))
      .option('-c, --config <file>', "the worker's config: its worker.http host, port, tls and adminToken locate and authorise the call")
      .addOption(new Option('--token <token>', 'admin bearer token (default: worker.http.adminToken of -c)').env('ADJUNCT_ADMIN_TOKEN'))
      .option(
        '--catalog',
        'reload/rollback/pause/resume: act in the Cassandra catalog of -c directly (no worker needed; every worker follows within worker.generationPoll)',
      )
      .option('--json', 'machine-readable output')
      .option('--to <generation>', 'rollback: the generation to make current (required for rollback)')
      .action(action((pipeline: string, o: AdminOpts) => adminCommand(name, pipeline, o)));
  }

  program
    .command('serve')
    .description('serve the read-only HTTP API (stores, readiness, status) from Cassandra, without running a worker')
    .requiredOption('-c, --config <file>', 'config with the Cassandra and worker.http settings')
    .option('-p, --port <port>', 'port (default worker.http.port)')
    .option('--host <host>', 'bind host (default worker.http.host)')
    .action(action((o: ServeOpts) => serveCommand(o)));
}
