/**
 * The real adjunct worker (child process, versioned global store), timed from process spawn until its own committed
 * offsets reach the end offsets (it reports that moment itself, so no polling interval is added).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Admin, Kafka } from 'kafkajs';
import { Client } from 'cassandra-driver';
import { stringify } from 'yaml';
import { parseConfig } from '../../../src/config';
import { applySchema } from '../../../src/worker/store-setup';
import { stackEndpoints, stackSettings } from '../../devstack/endpoints';
import { cpuBetween, sampleCpu } from '../server-cpu';
import { ChildMode, nextMessage, sampleRss, spawnWorkerChild } from '../child-process';
import { caughtUp, cassandraContactPoints, endOffsets } from '../infra';
import { serverCounts, ServerCounts } from '../server-counters';
import { ratePerSec } from '../stats';
import type { ChildMessage, RequestCounts } from '../worker-child';
import { PhaseResult } from './types';
import { CASSANDRA_BATCH_WARN_BYTES } from '../../../src/store/cassandra/batch-data-size';

/** Settings of the adjunct phase. */
export interface AdjunctPhaseOptions {
  topic: string;
  keyspace: string;
  groupId: string;
  storeName: string;
  maxInFlight: number;
  commitIntervalMs: number;
  records: number;
  /** Directory for the worker log and (with profile) the .cpuprofile. */
  workDir: string;
  profile: boolean;
  /** CPU list for the child (taskset -c), when pinned. */
  cpus?: string;
  /** Batch bounds (set in the config only when they differ from the worker's defaults). */
  batchMaxBytes?: number;
  batchMaxRows?: number;
  /** The store's compaction class (the worker default when unset). */
  compaction?: string;
  /** The store's table layout (the worker default, rows, when unset). */
  layout?: 'rows' | 'edges';
}

/** What the adjunct phase measured besides throughput. */
export interface AdjunctDetails {
  mode: ChildMode;
  peakRssMb: number;
  meanRssMb: number;
  wallSecondsInclStartup: number;
  startupSeconds: number;
  /** Untimed `adjunct schema` before the spawn: keyspace, catalog and store tables (a fresh keyspace every round). */
  schemaSeconds: number;
  /** CPU time of the worker process (user + system) from start to caught-up, per record. */
  cpuMicrosPerRecord: number | null;
  /** The same without start-up (from `started` to caught-up): the per-record cost of the write path itself. */
  cpuMicrosPerRecordAfterStartup: number | null;
  /** CPU time of start-up (Node, modules, connections, DDL, until the worker reported started), in seconds. */
  startupCpuSeconds: number | null;
  /** First to last data-table INSERT completion: the write pipeline alone, without the final commit lag. */
  writeSeconds: number;
  /** Last data write done → committed offsets at the end (commit interval + checkpoint/clean-up drain). */
  commitLagSeconds: number;
  /** Child RSS and V8 heap in use when caught up. */
  endRssMb: number;
  endHeapUsedMb: number;
  endHeapTotalMb: number;
  endExternalMb: number;
  /** BENCH_CHILD_NODE_OPTIONS given to the child, if any. */
  childNodeOptions?: string;
  /** Every node flag the child ran with: the defaults of `adjunct run` (bin/node-flags.js) and any experiment flags. */
  nodeFlags: string[];
  requests: RequestCounts;
  requestsPerRecord: number;
  dataTableRequestsPerRecord: number;
  server: ServerCounts | null;
  consumed: number;
  written: number;
  expired: number;
  profileFile?: string;
  logFile: string;
}

/** The worker config document the phase runs with (worker defaults except maxInFlight/commitInterval, no HTTP). */
export function adjunctConfigDoc(o: AdjunctPhaseOptions): Record<string, unknown> {
  const ep = stackEndpoints();
  const writeBatch: Record<string, number> = {};
  if (o.batchMaxBytes !== undefined && o.batchMaxBytes !== CASSANDRA_BATCH_WARN_BYTES) writeBatch.maxBytes = o.batchMaxBytes;
  if (o.batchMaxRows !== undefined && o.batchMaxRows !== 64) writeBatch.maxRows = o.batchMaxRows;
  return {
    kafka: { brokers: ep.kafkaBrokers, clientId: o.groupId },
    cassandra: {
      contactPoints: cassandraContactPoints(),
      localDataCenter: ep.localDataCenter,
      keyspace: o.keyspace,
      ...(Object.keys(writeBatch).length ? { writeBatch } : {}),
    },
    worker: {
      groupId: o.groupId,
      maxInFlight: o.maxInFlight,
      commitInterval: o.commitIntervalMs,
      http: { enabled: false },
      shutdownTimeout: 10_000,
      logLevel: (process.env.BENCH_CHILD_LOG_LEVEL as 'warn' | undefined) ?? 'warn',
    },
    pipelines: [
      {
        name: 'bench',
        topics: [o.topic],
        keyConverter: 'string',
        valueConverter: 'json',
        store: {
          name: o.storeName,
          kind: 'versioned',
          scope: 'global',
          ...(o.layout !== undefined ? { layout: o.layout } : {}),
          ...(o.compaction !== undefined ? { tableOptions: { compaction: { class: o.compaction } } } : {}),
        },
      },
    ],
  };
}

/** Runs the worker child until every partition's committed offset reaches the end offset; samples its RSS throughout. */
export async function adjunctPhase(
  admin: Admin,
  _kafka: Kafka,
  client: Client,
  o: AdjunctPhaseOptions,
): Promise<PhaseResult & { details: AdjunctDetails }> {
  fs.mkdirSync(o.workDir, { recursive: true });
  const cfgFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'adjunct-bench-')), 'bench.yaml');
  const doc = stringify(adjunctConfigDoc(o));
  fs.writeFileSync(cfgFile, doc);
  // The schema is applied untimed (`adjunct schema`), as every raw phase creates its table before its clock starts: a
  // deployment applies it once, while every round here starts on a fresh keyspace. Spawn, group join and fetch stay timed.
  const schemaT0 = Date.now();
  await applySchema(parseConfig(doc, { env: process.env }), `bench-schema-${process.pid}`);
  const schemaSeconds = (Date.now() - schemaT0) / 1000;
  const logFile = path.join(o.workDir, 'worker-child.log');
  const profDir = o.profile ? path.join(o.workDir, 'profile') : undefined;
  if (profDir) fs.mkdirSync(profDir, { recursive: true });
  const end = await endOffsets(admin, o.topic);
  // Server CPU and CPU busy shares over the timed window only (spawn → caught up), without the schema or the stop.
  const stackDir = stackSettings().stackDir;
  const cpuStart = sampleCpu(stackDir);
  const spawnedAt = Date.now();
  const { child, mode, nodeFlags } = await spawnWorkerChild(cfgFile, logFile, {
    cpuProfDir: profDir,
    endOffsets: Object.fromEntries([...end].map(([p, o]) => [String(p), o.toString()])),
    cpus: o.cpus,
  });
  const rss = sampleRss(child.pid!, 200);
  let started: Extract<ChildMessage, { type: 'started' }>;
  try {
    started = await nextMessage(child, 'started');
  } catch (e) {
    rss.stop();
    child.kill('SIGKILL');
    throw new Error(`${(e as Error).message} (see ${logFile})`);
  }
  let failed: string | undefined;
  let caught: Extract<ChildMessage, { type: 'caughtUp' }> | undefined;
  child.on('message', (m: ChildMessage) => {
    if (m.type === 'failed') failed = m.error;
    if (m.type === 'caughtUp') caught = m;
  });
  const deadline = Date.now() + Math.max(600_000, o.records * 5);
  while (!caught) {
    if (failed) throw new Error(`worker failed: ${failed} (see ${logFile})`);
    // A V8 abort ends the child by a signal (exitCode stays null).
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`worker child exited with ${child.exitCode ?? child.signalCode} (see ${logFile})`);
    if (Date.now() > deadline) throw new Error(`worker did not catch up in time (see ${logFile})`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const cpuEnd = sampleCpu(stackDir);
  // The group's committed offsets, read back from Kafka, must agree with what the child reported.
  if (!(await caughtUp(admin, `${o.groupId}.bench.g1`, o.topic, end)))
    throw new Error(`worker reported caught up, but the group's committed offsets are behind (see ${logFile})`);
  const doneAt = caught.at;
  const statsP = nextMessage<Extract<ChildMessage, { type: 'stats' }>>(child, 'stats');
  child.send({ cmd: 'stats' });
  const stats = await statsP;
  const mem = rss.stop();
  const stoppedP = nextMessage(child, 'stopped', 60_000).catch(() => undefined);
  child.send({ cmd: 'stop' });
  await stoppedP;
  await new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
  const server = await serverCounts(client, o.keyspace);
  const firstWrite = stats.firstDataWriteAt ?? started.at;
  // From process spawn (Node start-up, group join, first fetch included) to the last commit.
  const ms = doneAt - spawnedAt;
  const total = Object.values({ ...stats.counts, batchedRows: 0, dataTable: 0, metadata: 0 }).reduce((a, b) => a + b, 0);
  const profileFile = profDir
    ? fs
        .readdirSync(profDir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(profDir, f))[0]
    : undefined;
  const details: AdjunctDetails = {
    mode,
    peakRssMb: mem.peakMb,
    cpuMicrosPerRecord: caught.cpuMicros / o.records,
    cpuMicrosPerRecordAfterStartup: (caught.cpuMicros - started.cpuMicros) / o.records,
    startupCpuSeconds: started.cpuMicros / 1e6,
    meanRssMb: mem.meanMb,
    wallSecondsInclStartup: (doneAt - spawnedAt) / 1000,
    startupSeconds: (started.at - spawnedAt) / 1000,
    schemaSeconds,
    writeSeconds: ((stats.lastDataWriteDoneAt ?? doneAt) - firstWrite) / 1000,
    commitLagSeconds: (doneAt - (stats.lastDataWriteDoneAt ?? doneAt)) / 1000,
    endRssMb: stats.rssMb,
    endHeapUsedMb: stats.heapUsedMb,
    endHeapTotalMb: stats.heapTotalMb,
    endExternalMb: stats.externalMb,
    childNodeOptions: process.env.BENCH_CHILD_NODE_OPTIONS || undefined,
    nodeFlags,
    requests: stats.counts,
    requestsPerRecord: total / o.records,
    dataTableRequestsPerRecord: stats.counts.dataTable / o.records,
    server,
    consumed: stats.consumed,
    written: stats.written,
    expired: stats.expired,
    profileFile,
    logFile,
  };
  return {
    phase: 'adjunct (worker)',
    count: o.records,
    unit: 'records',
    seconds: ms / 1000,
    ratePerSec: ratePerSec(o.records, ms),
    extra: {
      statementsPerRecord: details.requestsPerRecord,
      cpuMicrosPerRecord: details.cpuMicrosPerRecord,
      ...cpuBetween(cpuStart, cpuEnd, o.records),
    },
    details,
  };
}
