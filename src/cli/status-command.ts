import type { Lookup } from '../lookup';
import { ReadConfig } from '../config';
import { iso, printJson, table } from './output';
import { withLookup } from './read-session';
import { callApi } from './worker-api';

/** Options of `adjunct status`. */
export interface StatusOpts {
  url: string;
  config?: string;
  json?: boolean;
}

/** `adjunct status`: from Cassandra's catalog and status tables with --config, else from a running worker's API. */
export async function statusCommand(o: StatusOpts): Promise<void> {
  if (o.config) return statusFromCatalog(o.config, o.json);
  return statusFromWorker(o.url, o.json);
}

/** What the catalog tells: stores, bootstrap readiness, writers' horizons and live workers. */
type CatalogStatus = Awaited<ReturnType<typeof readCatalogStatus>>;

async function statusFromCatalog(configFile: string, json: boolean | undefined): Promise<void> {
  const out = await withLookup(configFile, readCatalogStatus);
  if (json) return printJson(out);
  printCatalogStatus(out);
}

async function readCatalogStatus(l: Lookup, loaded: { config: ReadConfig }) {
  const bootstrap = loaded.config.pipelines.filter((p) => p.bootstrap).map((p) => p.name);
  const stores = await l.stores();
  const horizons = await Promise.all(stores.map(async (s) => ({ store: s.name, writers: await l.store(s.name).horizons() })));
  const { WorkerRegistry } = await import('../generations');
  const workers = await new WorkerRegistry(l.client, loaded.config.cassandra.keyspace).all();
  return { stores, readiness: await l.readiness(bootstrap), horizons, workers };
}

function printCatalogStatus(out: CatalogStatus): void {
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
  process.stdout.write(`BOOTSTRAP PIPELINES (${out.readiness.ready ? 'all READY' : `not ready: ${out.readiness.notReady.join(', ')}`})\n`);
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
}

/** A pipeline as the worker's /status reports it (only what is shown). */
interface PipelineReply extends Record<string, unknown> {
  name: string;
  counts?: Record<string, unknown>;
  bootstrap?: { state?: string; done?: number; total?: number };
  writers?: Record<string, unknown>[];
  partitions?: Record<string, unknown>[];
}

async function statusFromWorker(url: string, json: boolean | undefined): Promise<void> {
  const st = (await callApi(url, 'GET', 'status')) as Record<string, unknown>;
  if (json || !Array.isArray(st.pipelines)) return printJson(st);
  process.stdout.write(`worker ${String(st.workerId)}  state ${String(st.state)}  started ${String(st.startedAt ?? '')}\n`);
  if (st.lastError) process.stdout.write(`last error: ${String(st.lastError)}\n`);
  printWorkerPipelines(st.pipelines as PipelineReply[]);
}

function printWorkerPipelines(pipelines: PipelineReply[]): void {
  const rows = pipelines.map((p) => {
    const c = p.counts ?? {};
    const b = p.bootstrap;
    return {
      ...p,
      consumed: c.consumed,
      written: c.written,
      deadLettered: c.deadLettered,
      bootstrap: b ? `${b.state} ${b.done}/${b.total}` : '-',
    };
  });
  process.stdout.write(`${table(rows, ['name', 'state', 'store', 'generation', 'consumed', 'written', 'deadLettered', 'bootstrap'])}\n`);
  const live = pipelines.flatMap((p) =>
    (p.writers ?? []).map((w) => ({ pipeline: p.name, worker: w.worker, generation: w.generation, role: w.role })),
  );
  if (live.length) process.stdout.write(`\nLIVE WORKERS\n${table(live, ['pipeline', 'worker', 'generation', 'role'])}\n`);
  const parts = pipelines.flatMap((p) =>
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
}
