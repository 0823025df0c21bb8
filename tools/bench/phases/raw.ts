/** Baselines: cassandra-driver alone inserting the rows (single-row and batched), and kafkajs alone reading the topic. */
import { Client, types } from 'cassandra-driver';
import { Kafka } from 'kafkajs';
import { Dataset } from '../dataset';
import { stackSettings } from '../../devstack/endpoints';
import { batchesBySize, runPool } from '../pool';
import { serverCpuWindow } from '../server-cpu';
import { cpuMicrosSince, LatencyRecorder, msSince, ratePerSec } from '../stats';
import { PhaseResult } from './types';
import { CELL_DATA_BYTES, ROW_DATA_BYTES } from '../../../src/store/cassandra/batch-data-size';

/**
 * Cassandra's size of a raw row (the measure the worker's batcher cuts by, for this table's own columns: ts clusters,
 * one value cell; the partition key is not counted).
 */
function rawRowDataBytes(value: Buffer): number {
  return ROW_DATA_BYTES + 8 + CELL_DATA_BYTES + value.length;
}
/** Untimed rows written before each raw phase (prepares, JIT, connection warm-up). */
const WARMUP_ROWS = 5000;

const opts = { prepare: true, consistency: types.consistencies.localQuorum, isIdempotent: true };

async function rawTable(client: Client, keyspace: string): Promise<string> {
  await client.execute(`CREATE TABLE IF NOT EXISTS ${keyspace}.raw (key blob, ts bigint, value blob, PRIMARY KEY ((key), ts))`);
  return `INSERT INTO ${keyspace}.raw (key, ts, value) VALUES (?, ?, ?)`;
}

/** Rows of the warm-up: the first records' values under keys of their own (they do not collide with measured rows). */
function warmupParams(d: Dataset, i: number): unknown[] {
  return [Buffer.from(`warmup-${i % 1000}`), types.Long.fromNumber(i), d.values[i % d.size]];
}

/** Untimed rows of each concurrency probe (each candidate is probed twice, in both orders). */
const PROBE_ROWS = 20_000;

/** Writes `rows` untimed warm-up rows starting at row `from` with `concurrency` requests in flight. */
type ProbeWrite = (from: number, rows: number, concurrency: number) => Promise<void>;

/**
 * The concurrency a careful client would pick: untimed probes of PROBE_ROWS rows at C, 2C and 4C, each twice (forward,
 * then reverse order, so a Cassandra still warming up favours none); returns the fastest and the probes' mean rates.
 */
async function tuneConcurrency(write: ProbeWrite, base: number): Promise<{ best: number; rates: Record<number, number> }> {
  const candidates = [base, base * 2, base * 4];
  const sums = new Map<number, number>();
  let row = WARMUP_ROWS;
  for (const c of [...candidates, ...[...candidates].reverse()]) {
    const t0 = process.hrtime.bigint();
    await write(row, PROBE_ROWS, c);
    row += PROBE_ROWS;
    sums.set(c, (sums.get(c) ?? 0) + ratePerSec(PROBE_ROWS, msSince(t0)) / 2);
  }
  const rates: Record<number, number> = {};
  let best = base;
  for (const c of candidates) {
    rates[c] = Math.round(sums.get(c)!);
    if (sums.get(c)! > sums.get(best)!) best = c;
  }
  return { best, rates };
}

/**
 * Inserts every record into a plain `(key, ts, value)` table with prepared INSERTs, warmed up, at the concurrency that
 * was fastest in untimed probes of `concurrency`, 2× and 4× (tuneConcurrency).
 */
export async function rawInsert(client: Client, keyspace: string, d: Dataset, concurrency: number): Promise<PhaseResult> {
  const cql = await rawTable(client, keyspace);
  await runPool(WARMUP_ROWS, concurrency, (i) => client.execute(cql, warmupParams(d, i), opts));
  const tuned = await tuneConcurrency(
    (from, rows, c) => runPool(rows, c, (i) => client.execute(cql, warmupParams(d, from + i), opts)),
    concurrency,
  );
  const lat = new LatencyRecorder(d.size);
  // Server CPU over the timed window only (the warm-up and the probes wrote 125,000 more rows).
  const serverCpu = serverCpuWindow(stackSettings().stackDir);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await runPool(
    d.size,
    tuned.best,
    (i) => client.execute(cql, [d.keyBytes[d.keyIdx[i]], types.Long.fromNumber(d.ts[i]), d.values[i]], opts),
    lat,
  );
  const ms = msSince(t0);
  const cpuMicrosPerRecord = cpuMicrosSince(cpu0) / d.size;
  return {
    phase: 'raw insert',
    count: d.size,
    unit: 'records',
    seconds: ms / 1000,
    ratePerSec: ratePerSec(d.size, ms),
    latency: lat.summary(),
    extra: {
      ...serverCpu(d.size),
      statementsPerRecord: 1,
      cpuMicrosPerRecord,
      concurrency: tuned.best,
      concurrencyProbeRates: tuned.rates,
    },
  };
}

/**
 * Inserts every record as UNLOGGED batches cut by the worker's bounds (maxBytes, maxRows, in record order), warmed up,
 * with the number of batches in flight that was fastest in untimed probes of `base`, 2× and 4× (tuneConcurrency): the
 * hand-written best case of batched writes on this table.
 */
export async function rawBatchedInsert(
  client: Client,
  keyspace: string,
  d: Dataset,
  base: number,
  maxBytes: number,
  maxRows: number,
): Promise<PhaseResult> {
  const cql = await rawTable(client, keyspace);
  const batchOpts = { ...opts, logged: false };
  const sizeOf = (i: number) => rawRowDataBytes(d.values[i]);
  /** Untimed warm-up rows [from, from + rows) as batches cut by the same bounds. */
  const warmRows = async (from: number, rows: number, concurrency: number) => {
    const warm = batchesBySize(rows, () => 300, maxBytes, maxRows);
    await runPool(warm.length - 1, concurrency, (b) => {
      const q = [];
      for (let i = warm[b]; i < warm[b + 1]; i++) q.push({ query: cql, params: warmupParams(d, from + i) });
      return client.batch(q, batchOpts);
    });
  };
  await warmRows(0, WARMUP_ROWS, base);
  const tuned = await tuneConcurrency(warmRows, base);
  const concurrency = tuned.best;
  const bounds = batchesBySize(d.size, sizeOf, maxBytes, maxRows);
  const batches = bounds.length - 1;
  const lat = new LatencyRecorder(batches);
  // Server CPU over the timed window only (the warm-up and the probes wrote 125,000 more rows).
  const serverCpu = serverCpuWindow(stackSettings().stackDir);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await runPool(
    batches,
    concurrency,
    (b) => {
      const q = [];
      for (let i = bounds[b]; i < bounds[b + 1]; i++)
        q.push({ query: cql, params: [d.keyBytes[d.keyIdx[i]], types.Long.fromNumber(d.ts[i]), d.values[i]] });
      return client.batch(q, batchOpts);
    },
    lat,
  );
  const ms = msSince(t0);
  const cpuMicrosPerRecord = cpuMicrosSince(cpu0) / d.size;
  return {
    phase: 'raw batched insert',
    count: d.size,
    unit: 'records',
    seconds: ms / 1000,
    ratePerSec: ratePerSec(d.size, ms),
    latency: lat.summary(),
    extra: {
      ...serverCpu(d.size),
      statementsPerRecord: batches / d.size,
      rowsPerBatch: d.size / batches,
      cpuMicrosPerRecord,
      concurrency,
      concurrencyProbeRates: tuned.rates,
      maxBytes,
      maxRows,
    },
  };
}

/** Reads the topic to the end with a fresh consumer group and no processing (timed from run(), incl. group join). */
export async function rawConsume(kafka: Kafka, topic: string, groupId: string, expected: number): Promise<PhaseResult> {
  const consumer = kafka.consumer({ groupId, maxBytesPerPartition: 1 << 20, maxBytes: 16 << 20, allowAutoTopicCreation: false });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let count = 0;
  let first: bigint | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const t0 = process.hrtime.bigint();
  await consumer.run({
    autoCommit: false,
    partitionsConsumedConcurrently: 8,
    eachBatch: async ({ batch }) => {
      first ??= process.hrtime.bigint();
      count += batch.messages.length;
      if (count >= expected) resolveDone();
    },
  });
  await done;
  // Timed from run() (group join + fetches): the first batch often already holds most of a small topic.
  const ms = msSince(t0);
  const fromFirstBatchMs = msSince(first ?? t0);
  await consumer.disconnect();
  return {
    phase: 'raw consume',
    count,
    unit: 'records',
    seconds: ms / 1000,
    ratePerSec: ratePerSec(count, ms),
    extra: { secondsFromFirstBatch: fromFirstBatchMs / 1000 },
  };
}
