/**
 * Child-process entry of the adjunct phase: starts one Worker from a config file, counts every Cassandra request the
 * process sends (by statement kind, data table vs adjunct_* metadata tables) and answers the parent over IPC.
 * Usage: node worker-child.js <config.yaml> [<end offsets JSON {partition: offset}>]
 * (messages: {cmd:'stats'} → {type:'stats'}, {cmd:'stop'} → exit 0; with end offsets it sends {type:'caughtUp'} as soon
 * as its own committed offsets reach them, with the CPU time the process used so far)
 */
import '../../src/kafka/preload';
import * as fs from 'fs';
import * as inspector from 'inspector';
import { Client } from 'cassandra-driver';
import { loadConfigFile } from '../../src/config';
import { describeError } from '../../src/errors';
import { createLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';
import { Worker } from '../../src/worker/worker';

/** Cassandra requests sent by the child, by kind. */
export interface RequestCounts {
  select: number;
  insert: number;
  delete: number;
  update: number;
  other: number;
  batch: number;
  /** Rows carried by those batches. */
  batchedRows: number;
  /** Requests on the store's data table (everything not on an adjunct_* table). */
  dataTable: number;
  /** Requests on adjunct_* metadata tables (catalog, status, stream time) and DDL. */
  metadata: number;
}

/** Message sent by the child to the parent. */
export type ChildMessage =
  | { type: 'started'; at: number; cpuMicros: number }
  | { type: 'caughtUp'; at: number; cpuMicros: number }
  | { type: 'failed'; error: string }
  | {
      type: 'stats';
      counts: RequestCounts;
      firstDataWriteAt: number | null;
      lastDataWriteDoneAt: number | null;
      consumed: number;
      written: number;
      expired: number;
      rssMb: number;
      heapUsedMb: number;
      heapTotalMb: number;
      externalMb: number;
    }
  | { type: 'stopped' };

const counts: RequestCounts = { select: 0, insert: 0, delete: 0, update: 0, other: 0, batch: 0, batchedRows: 0, dataTable: 0, metadata: 0 };
let firstDataWriteAt: number | null = null;
let lastDataWriteDoneAt: number | null = null;

/** Counts a request; returns true for a write to the data table. */
function classify(query: string): boolean {
  const head = query.trimStart().slice(0, 6).toUpperCase();
  const kind =
    head === 'SELECT' ? 'select' : head === 'INSERT' ? 'insert' : head === 'DELETE' ? 'delete' : head === 'UPDATE' ? 'update' : 'other';
  counts[kind]++;
  const meta = kind === 'other' || /\.adjunct_|system/.test(query);
  if (meta) counts.metadata++;
  else {
    counts.dataTable++;
    if (kind === 'insert') {
      if (firstDataWriteAt === null) firstDataWriteAt = Date.now();
      return true;
    }
  }
  return false;
}

/** Wraps Client.prototype.execute/batch so every request of every client in this process is counted. */
function instrumentDriver(): void {
  const proto = Client.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const execute = proto.execute;
  proto.execute = function (this: unknown, ...args: unknown[]) {
    const dataWrite = typeof args[0] === 'string' && classify(args[0]);
    const r = execute.apply(this, args);
    if (dataWrite && r instanceof Promise)
      void r.then(
        () => (lastDataWriteDoneAt = Date.now()),
        () => undefined,
      );
    return r;
  };
  const batch = proto.batch;
  proto.batch = function (this: unknown, ...args: unknown[]) {
    counts.batch++;
    const rows = Array.isArray(args[0]) ? args[0].length : 0;
    counts.batchedRows += rows;
    // The worker batches only data-table rows.
    counts.dataTable++;
    if (firstDataWriteAt === null) firstDataWriteAt = Date.now();
    const r = batch.apply(this, args);
    if (r instanceof Promise)
      void r.then(
        () => (lastDataWriteDoneAt = Date.now()),
        () => undefined,
      );
    return r;
  };
}

function send(m: ChildMessage): void {
  process.send?.(m);
}

/**
 * Polls the worker's own status until every non-empty partition's committed offset reached its end offset. Every
 * 20 ms: at 5 ms, building the status was 1.2% of the worker's profiled CPU (500k records), charged to the worker by
 * the harness that measures it; 20 ms is 0.06% of a 1M-record run, and commits come every 100 ms.
 */
function watchCaughtUp(worker: Worker, end: Record<string, string>): void {
  const want = Object.entries(end).filter(([, o]) => BigInt(o) > 0n);
  const timer = setInterval(() => {
    const parts = worker.status().pipelines.flatMap((p) => p.partitions);
    const done = want.every(([p, o]) => {
      const c = parts.find((x) => x.partition === Number(p))?.committedOffset;
      return c !== null && c !== undefined && BigInt(c) >= BigInt(o);
    });
    if (!done) return;
    clearInterval(timer);
    stopHeapSampling();
    const cpu = process.cpuUsage();
    send({ type: 'caughtUp', at: Date.now(), cpuMicros: cpu.user + cpu.system });
  }, 20);
}

/**
 * BENCH_CHILD_HEAP_PROFILE=<file>: V8's sampling heap profile from start to caught-up, collected objects included.
 * BENCH_CHILD_HEAP_PROFILE_PROMOTED=1 leaves out objects a scavenge collected: what remains outlived the young
 * generation (promoted to the old space, where only mark-compacts free it).
 */
const heapProfileFile = process.env.BENCH_CHILD_HEAP_PROFILE;
let heapSession: inspector.Session | undefined;

function startHeapSampling(): void {
  if (!heapProfileFile) return;
  heapSession = new inspector.Session();
  heapSession.connect();
  heapSession.post('HeapProfiler.startSampling', {
    samplingInterval: 16384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.BENCH_CHILD_HEAP_PROFILE_PROMOTED !== '1',
  } as inspector.HeapProfiler.StartSamplingParameterType);
}

function stopHeapSampling(): void {
  const session = heapSession;
  if (!session || !heapProfileFile) return;
  heapSession = undefined;
  session.post('HeapProfiler.stopSampling', (err, r) => {
    if (!err) fs.writeFileSync(heapProfileFile, JSON.stringify(r.profile));
    session.disconnect();
  });
}

async function main(): Promise<void> {
  startHeapSampling();
  const file = process.argv[2];
  if (!file || !process.send) throw new Error('usage: worker-child <config.yaml> (spawned with an IPC channel)');
  instrumentDriver();
  const loaded = loadConfigFile(file);
  const metrics = new AdjunctMetrics({ defaultMetrics: false });
  const worker = new Worker(loaded, {
    logger: createLogger(loaded.config.worker.logLevel),
    metrics,
    onFatal: (e) => send({ type: 'failed', error: e.message }),
  });
  process.on('message', (m: { cmd?: string }) => {
    if (m.cmd === 'stats') {
      const c = worker.status().pipelines.reduce(
        (a, p) => ({
          consumed: a.consumed + p.counts.consumed,
          written: a.written + p.counts.written,
          expired: a.expired + p.counts.expired,
        }),
        { consumed: 0, written: 0, expired: 0 },
      );
      const mem = process.memoryUsage();
      send({
        type: 'stats',
        counts: { ...counts },
        firstDataWriteAt,
        lastDataWriteDoneAt,
        ...c,
        rssMb: mem.rss / 2 ** 20,
        heapUsedMb: mem.heapUsed / 2 ** 20,
        heapTotalMb: mem.heapTotal / 2 ** 20,
        externalMb: mem.external / 2 ** 20,
      });
    } else if (m.cmd === 'stop') {
      void worker.stop().finally(() => {
        send({ type: 'stopped' });
        setTimeout(() => process.exit(0), 50);
      });
    }
  });
  try {
    await worker.start();
  } catch (e) {
    send({ type: 'failed', error: describeError(e) });
    setTimeout(() => process.exit(1), 50);
    return;
  }
  const cpu = process.cpuUsage();
  send({ type: 'started', at: Date.now(), cpuMicros: cpu.user + cpu.system });
  if (process.argv[3]) watchCaughtUp(worker, JSON.parse(process.argv[3]) as Record<string, string>);
}

void main().catch((e) => {
  process.stderr.write(`worker-child: ${describeError(e)}\n`);
  process.exit(1);
});
