/** Test harness for running real workers against the local stack. */
import { generationGroup } from '../../../src/generations/names';
import { Client } from 'cassandra-driver';
import { Admin, Kafka, Producer, ProducerConfig } from 'kafkajs';
import { stringify } from 'yaml';
import { parseConfig } from '../../../src/config';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { createLogger } from '../../../src/observability/logger';
import { AdjunctMetrics } from '../../../src/observability/metrics';
import { Worker } from '../../../src/worker/worker';
import { cleanUp, uniqueName } from '../helpers';
import { killWorker, spawnWorker, WorkerProcess } from './processes';

/** Builds a config document pointing at the stack, with one pipeline by default. */
export function configDoc(
  keyspace: string,
  groupId: string,
  pipelines: object[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const ep = stackEndpoints();
  return {
    // The progress watchdog (default 4 × sessionTimeout = 120 s) restarts a consumer that stopped reading, or whose batch
    // settles nothing; tests wait 90 s for a catch-up, so their workers check at 30 s (detection ≤ 37.5 s, plus up to a
    // session timeout for the group to evict a wedged member). Freezes in the fault tests last ≤ 20 s, and paused or
    // stalled tasks are never restarted by it. (The "assigned but never reads" failures were the broker deleting old-dated
    // test records by time retention: the devstack turns it off, tools/devstack/kafka.ts.)
    kafka: { brokers: ep.kafkaBrokers, clientId: groupId, progressTimeout: '30s' },
    cassandra: {
      contactPoints: ep.cassandraContactPoints.map((c) => (c.includes(':') ? c : `${c}:${ep.cassandraPort}`)),
      localDataCenter: ep.localDataCenter,
      keyspace,
    },
    registry: { url: ep.registryUrl },
    worker: { groupId, commitInterval: 100, http: { enabled: false }, shutdownTimeout: 10_000, logLevel: 'warn' },
    pipelines,
    ...extra,
  };
}

/** Writes a config document to a temp YAML file (for child-process workers). */
export function writeConfigFile(doc: Record<string, unknown>): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fs = require('fs') as typeof import('fs');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const path = require('path') as typeof import('path');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const os = require('os') as typeof import('os');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'adjunct-cfg-')), 'pipelines.yaml');
  fs.writeFileSync(file, stringify(doc));
  return file;
}

/** Starts an in-process worker from a config document. */
export async function startWorker(
  doc: Record<string, unknown>,
  opts: { verbose?: boolean; metrics?: AdjunctMetrics } = {},
): Promise<Worker> {
  const config = parseConfig(stringify(doc), { env: process.env });
  const w = new Worker(
    { config, baseDir: process.cwd() },
    {
      logger: opts.verbose ? createLogger('info') : recentLogger(),
      metrics: opts.metrics ?? new AdjunctMetrics({ defaultMetrics: false }),
    },
  );
  try {
    await w.start();
  } catch (e) {
    await w.stop(); // a worker that failed to start still holds its clients
    throw e;
  }
  lastWorker = w;
  return w;
}

/** The in-process worker this test file started last: its status goes into timeout messages. */
let lastWorker: Worker | undefined;

/** Sum of the high watermarks of a topic. */
export async function endOffsets(admin: Admin, topic: string): Promise<Map<number, bigint>> {
  const offs = await admin.fetchTopicOffsets(topic);
  return new Map(offs.map((o) => [o.partition, BigInt(o.high)]));
}

/** Committed offsets of a group on a topic (partition → next offset, -1 when none). */
export async function committedOffsets(admin: Admin, groupId: string, topic: string): Promise<Map<number, bigint>> {
  const r = await admin.fetchOffsets({ groupId, topics: [topic] });
  return new Map(r[0].partitions.map((p) => [p.partition, BigInt(p.offset)]));
}

/** The last log lines of the in-process workers this test file started (info level), kept for failure messages. */
const recentLines: string[] = [];
const RECENT_LINES = 120;

/** A logger that keeps the last lines in memory instead of printing them. */
function recentLogger() {
  return createLogger('info', {
    write(line: string) {
      recentLines.push(line.trimEnd());
      if (recentLines.length > RECENT_LINES) recentLines.splice(0, recentLines.length - RECENT_LINES);
    },
  });
}

/** Worker processes this test spawned, newest last: the tails of their output go into timeout messages. */
const recentProcs: WorkerProcess[] = [];

/** The tail of one worker process's output (the last `lines` lines). */
function processTail(w: WorkerProcess, lines: number): string {
  const state = w.child.exitCode !== null || w.child.signalCode !== null ? `exited ${w.child.exitCode ?? w.child.signalCode}` : 'running';
  const tail = w.output().trimEnd().split('\n').slice(-lines).join('\n');
  return `\nlast output of worker process ${w.child.pid} (${state}):\n${tail}`;
}

/** The tail of the logs of the workers this test started, in-process and spawned, for a timeout's message ('' when none). */
export function recentWorkerLogs(lines = 60): string {
  const procs = recentProcs
    .slice(-2)
    .map((w) => processTail(w, lines))
    .join('');
  if (!recentLines.length) return procs;
  let status = '';
  try {
    if (lastWorker) status = `\nstatus of the last worker started: ${JSON.stringify(lastWorker.status()).slice(0, 6000)}`;
  } catch (e) {
    status = `\nstatus of the last worker started: unavailable (${String(e)})`;
  }
  return `\nlast ${Math.min(lines, recentLines.length)} worker log lines:\n${recentLines.slice(-lines).join('\n')}${status}${procs}`;
}

/** Waits until the group's committed offsets reach the topic's end offsets (bounded: room for one watchdog restart). */
export async function waitCaughtUp(admin: Admin, groupId: string, topic: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const end = await endOffsets(admin, topic);
    const com = await committedOffsets(admin, groupId, topic);
    if ([...end].every(([p, e]) => e === 0n || (com.get(p) ?? -1n) >= e)) return;
    last = JSON.stringify({ end: [...end].map(String), committed: [...com].map(String) });
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`group ${groupId} did not catch up on ${topic} within ${timeoutMs} ms: ${last}${recentWorkerLogs()}`);
}

/** Polls a condition (bounded). */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v as T;
    } catch (e) {
      lastErr = e;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}${recentWorkerLogs()}`);
}

/** Reads every row of a versioned table as `key|valid_from|value` strings, sorted. */
export async function dumpVersioned(client: Client, keyspace: string, table: string): Promise<string[]> {
  const rs = await client.execute(`SELECT key, valid_from, value FROM ${keyspace}.${table}`, [], { fetchSize: 100_000 });
  return rs.rows
    .map(
      (r) =>
        `${(r.get('key') as Buffer).toString('utf8')}|${r.get('valid_from').toString()}|${r.get('value') === null ? 'null' : (r.get('value') as Buffer).toString('utf8')}`,
    )
    .sort();
}

/** Keyspaces named for this file's tests: dropped after its describe block (a dev node keeps every table in memory). */
const namedKeyspaces: string[] = [];

/** Names for one test: keyspace, topic, group. */
export function names(prefix: string) {
  const keyspace = uniqueName(`${prefix}_ks`);
  namedKeyspaces.push(keyspace);
  return {
    keyspace,
    topic: uniqueName(`${prefix}_t`).replace(/_/g, '-'),
    group: uniqueName(`${prefix}_g`),
    dlq: uniqueName(`${prefix}_dlq`).replace(/_/g, '-'),
  };
}

/** The consumer group a pipeline's generation uses. */
/** Consumer group of a pipeline generation: the production rule (`generationGroup`), generation 1 by default. */
export const pipelineGroup = (groupId: string, pipeline: string, generation = 1) => generationGroup(groupId, pipeline, generation);

/** Connects an admin client. */
export async function connectAdmin(kafka: Kafka): Promise<Admin> {
  const a = kafka.admin();
  await a.connect();
  return a;
}

/** Clients, producers, the in-process worker and the worker processes of one describe block. */
export interface StackFixture {
  kafka: Kafka;
  admin: Admin;
  client: Client;
  worker?: Worker;
  /** Worker processes spawned by the tests; killed after the block. */
  procs: WorkerProcess[];
  /** A connected producer (the fixture's producer settings), disconnected after the test. */
  producer(): Promise<Producer>;
  /** Spawns an `adjunct run` worker process that is killed after the block if still alive (HTTP API only when `http`). */
  spawn(configFile: string, env?: NodeJS.ProcessEnv, http?: boolean): WorkerProcess;
}

/**
 * Opens a Kafka admin and a Cassandra client for the describe block; stops the test's worker and producers after each test.
 * Producers write each record once (`NO_DUPLICATES`) unless `producerConfig` says otherwise.
 */
export function useStack(producerConfig?: ProducerConfig): StackFixture {
  const producers: Producer[] = [];
  let closed = false;
  /** A test body still running after jest's timeout must not open what the clean-up has already closed. */
  const open = () => {
    if (closed) throw new Error('the stack fixture is closed: this test ran past its timeout');
  };
  const s = {
    procs: [] as WorkerProcess[],
    async producer() {
      open();
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { NO_DUPLICATES } = require('../helpers') as typeof import('../helpers');
      const p = s.kafka.producer(producerConfig ?? NO_DUPLICATES);
      await p.connect();
      producers.push(p);
      return p;
    },
    spawn(configFile: string, env?: NodeJS.ProcessEnv, http?: boolean) {
      open();
      const w = spawnWorker(configFile, env, http);
      s.procs.push(w);
      recentProcs.push(w);
      return w;
    },
  } as StackFixture;
  beforeEach(() => {
    recentLines.length = 0; // a timeout's message shows this test's worker logs only
    recentProcs.length = 0;
  });
  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { newKafka, newCassandraClient } = require('../helpers') as typeof import('../helpers');
    s.kafka = newKafka();
    s.admin = await connectAdmin(s.kafka);
    s.client = await newCassandraClient();
  });
  afterEach(() =>
    cleanUp(
      () => s.worker?.stop(),
      () => (s.worker = undefined),
      () => Promise.all(producers.splice(0).map((p) => p.disconnect().catch(() => undefined))),
    ),
  );
  afterAll(() =>
    cleanUp(
      () => (closed = true),
      () => Promise.all(s.procs.map((p) => killWorker(p))),
      // Best effort, after every worker of the block stopped: a drop that times out leaves the keyspace to the next run.
      async () => {
        const until = Date.now() + 30_000; // well inside the hook's timeout
        for (const ks of namedKeyspaces.splice(0)) {
          if (Date.now() > until) break;
          await s.client?.execute(`DROP KEYSPACE IF EXISTS ${ks}`).catch(() => undefined);
        }
      },
      () => s.admin?.disconnect(),
      () => s.client?.shutdown(),
    ),
  );
  return s;
}

/** Runs one pipeline (on `n.topic` unless it names its topics) as the fixture's in-process worker and waits until it has caught up. */
export async function runPipeline(
  stack: StackFixture,
  n: { keyspace: string; group: string; topic: string },
  pipeline: { name: string } & Record<string, unknown>,
): Promise<Worker> {
  stack.worker = await startWorker(configDoc(n.keyspace, n.group, [{ topics: [n.topic], ...pipeline }]));
  await waitCaughtUp(stack.admin, pipelineGroup(n.group, pipeline.name), n.topic);
  return stack.worker;
}
