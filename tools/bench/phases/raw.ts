/** Baselines: cassandra-driver alone inserting the rows, and kafkajs alone reading the topic. */
import { Client, types } from 'cassandra-driver';
import { Kafka } from 'kafkajs';
import { Dataset } from '../dataset';
import { runPool } from '../pool';
import { LatencyRecorder, msSince, ratePerSec } from '../stats';
import { PhaseResult } from './types';

/** Inserts every record into a plain `(key, ts, value)` table with `concurrency` prepared INSERTs in flight. */
export async function rawInsert(client: Client, keyspace: string, d: Dataset, concurrency: number): Promise<PhaseResult> {
  await client.execute(`CREATE TABLE IF NOT EXISTS ${keyspace}.raw (key blob, ts bigint, value blob, PRIMARY KEY ((key), ts))`);
  const cql = `INSERT INTO ${keyspace}.raw (key, ts, value) VALUES (?, ?, ?)`;
  const opts = { prepare: true, consistency: types.consistencies.localQuorum, isIdempotent: true };
  // Warm-up: prepare the statement outside the timed window.
  await client.execute(cql, [Buffer.from('warmup'), types.Long.fromNumber(0), Buffer.alloc(1)], opts);
  const lat = new LatencyRecorder(d.size);
  const t0 = process.hrtime.bigint();
  await runPool(d.size, concurrency, (i) => client.execute(cql, [d.keyBytes[d.keyIdx[i]], types.Long.fromNumber(d.ts[i]), d.values[i]], opts), lat);
  const ms = msSince(t0);
  return { phase: 'raw insert', count: d.size, unit: 'records', seconds: ms / 1000, ratePerSec: ratePerSec(d.size, ms), latency: lat.summary(), extra: { statementsPerRecord: 1 } };
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
  return { phase: 'raw consume', count, unit: 'records', seconds: ms / 1000, ratePerSec: ratePerSec(count, ms), extra: { secondsFromFirstBatch: fromFirstBatchMs / 1000 } };
}
