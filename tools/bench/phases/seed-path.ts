/**
 * The naive versioned write path of seed 000 (KIP-889 on Cassandra, `PRIMARY KEY ((key), validTo)`, validTo = -1 for
 * the latest row): per record a read of the latest row, for late records a second read, then a LOGGED batch that
 * rewrites the previous row's validTo and inserts the new row. Read-modify-write, so writes of one key are serialised.
 */
import { Client, types } from 'cassandra-driver';
import { Dataset } from '../dataset';
import { lanesByKey, runLanes } from '../pool';
import { LatencyRecorder, msSince, ratePerSec } from '../stats';
import { PhaseResult } from './types';

const L = (n: number) => types.Long.fromNumber(n);
const num = (v: unknown) => (v instanceof types.Long ? v.toNumber() : Number(v));

/** Statement counts of the seed path. */
export interface SeedCounts {
  selects: number;
  batches: number;
  batchedInserts: number;
}

/** Writes every record through the seed's read-modify-write path with `concurrency` key lanes in flight. */
export async function seedPath(client: Client, keyspace: string, d: Dataset, concurrency: number): Promise<PhaseResult> {
  const t = `${keyspace}.seed_store`;
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${t} (key blob, validFrom bigint, validTo bigint, time bigint, value blob, PRIMARY KEY ((key), validTo)) ` +
      `WITH CLUSTERING ORDER BY (validTo ASC) AND compaction = { 'class' : 'LeveledCompactionStrategy' }`,
  );
  const latestQ = `SELECT validFrom, value FROM ${t} WHERE key = ? AND validTo = -1`;
  const coveringQ = `SELECT validFrom, validTo, value FROM ${t} WHERE key = ? AND validTo >= ? ORDER BY validTo ASC LIMIT 1`;
  const insertQ = `INSERT INTO ${t} (key, validFrom, validTo, time, value) VALUES (?, ?, ?, ?, ?)`;
  const cl = types.consistencies.localQuorum;
  const read = { prepare: true, consistency: cl, isIdempotent: true };
  const batchOpts = { prepare: true, logged: true, consistency: cl };
  const counts: SeedCounts = { selects: 0, batches: 0, batchedInserts: 0 };
  await client.execute(latestQ, [Buffer.from('warmup')], read);
  await client.execute(coveringQ, [Buffer.from('warmup'), L(0)], read);
  await client.batch([{ query: insertQ, params: [Buffer.from('warmup'), L(0), L(-1), L(0), Buffer.alloc(1)] }], batchOpts);

  const put = async (i: number) => {
    const key = d.keyBytes[d.keyIdx[i]];
    const ts = d.ts[i];
    const value = d.values[i];
    const ins = (validFrom: number, validTo: number, v: Buffer | null) => ({
      query: insertQ,
      params: [key, L(validFrom), L(validTo), L(ts), v],
    });
    counts.selects++;
    const latest = (await client.execute(latestQ, [key], read)).first();
    let queries;
    if (!latest) {
      queries = [ins(ts, -1, value)];
    } else if (num(latest.validfrom) <= ts) {
      // In order: close the current latest at ts, the new record becomes latest.
      queries = [ins(num(latest.validfrom), ts, latest.value as Buffer | null), ins(ts, -1, value)];
    } else {
      // Late: find the closed version covering ts and split it.
      counts.selects++;
      const cover = (await client.execute(coveringQ, [key, L(ts)], read)).first();
      if (cover && num(cover.validfrom) <= ts) {
        queries = [ins(num(cover.validfrom), ts, cover.value as Buffer | null), ins(ts, num(cover.validto), value)];
      } else {
        queries = [ins(ts, cover ? num(cover.validfrom) : num(latest.validfrom), value)];
      }
    }
    counts.batches++;
    counts.batchedInserts += queries.length;
    await client.batch(queries, batchOpts);
  };

  const lanes = lanesByKey(d.keyIdx, concurrency);
  const lat = new LatencyRecorder(d.size);
  const t0 = process.hrtime.bigint();
  await runLanes(lanes, put, lat);
  const ms = msSince(t0);
  return {
    phase: 'seed write path',
    count: d.size,
    unit: 'records',
    seconds: ms / 1000,
    ratePerSec: ratePerSec(d.size, ms),
    latency: lat.summary(),
    extra: { ...counts, statementsPerRecord: (counts.selects + counts.batches) / d.size },
  };
}
