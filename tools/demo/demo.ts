import * as path from 'path';
import { randomBytes } from 'crypto';
import { Client } from 'cassandra-driver';
import { Kafka, logLevel } from 'kafkajs';
import { loadConfigFile } from '../../src/config';
import { stackEndpoints } from '../devstack/endpoints';
import { ensureStack } from '../devstack/stack';
import { httpStarter } from '../../src/http/server';
import { openLookup } from '../../src/lookup';
import { createLogger } from '../../src/observability/logger';
import { Worker } from '../../src/worker/worker';
import { demoBaseTime, hhmmss, rateChanges, transactions } from './demo-data';

const say = (s = '') => process.stdout.write(s + '\n');
const step = (n: number, s: string) => say(`\n[${n}] ${s}`);

/** `npm run demo`: stack up, topics, a rates changelog + transactions, the worker, READY, and as-of joins through the lookup library. */
export async function runDemo(): Promise<number> {
  const run = randomBytes(3).toString('hex');
  const ep = stackEndpoints();
  process.env.ADJUNCT_KAFKA_BROKERS ??= ep.kafkaBrokers.join(',');
  process.env.ADJUNCT_CASSANDRA_CONTACT_POINTS ??= ep.cassandraContactPoints
    .map((c) => (c.includes(':') ? c : `${c}:${ep.cassandraPort}`))
    .join(',');
  process.env.ADJUNCT_DEMO_KEYSPACE = `adjunct_demo_${run}`;
  process.env.ADJUNCT_DEMO_GROUP = `adjunct-demo-${run}`;
  process.env.ADJUNCT_DEMO_RATES_TOPIC = `demo-rates-${run}`;
  process.env.ADJUNCT_HTTP_PORT ??= '8080';
  const txTopic = `demo-transactions-${run}`;

  say('adjunct demo: a currency-rates changelog materialised as a versioned Cassandra table, joined as-of by a transactions stream.');
  step(1, 'Starting the local stack (Kafka, Cassandra, schema registry) — first run downloads from Maven Central…');
  await ensureStack({ log: (s) => say(`    ${s}`) });

  const kafka = new Kafka({ clientId: 'adjunct-demo', brokers: ep.kafkaBrokers, logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  const loaded = loadConfigFile(path.resolve(__dirname, '../../config/demo.yaml'));
  const ratesTopic = loaded.config.pipelines[0].topics![0]; // demo.yaml lists its topics
  let worker: Worker | undefined;
  let http: Awaited<ReturnType<typeof httpStarter>>;
  let lookup: Awaited<ReturnType<typeof openLookup>> | undefined;
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    say('\nCleaning up (worker, topics, demo keyspace)…');
    await http?.close().catch(() => undefined);
    await lookup?.close().catch(() => undefined);
    await worker?.stop().catch(() => undefined);
    await admin.deleteTopics({ topics: [ratesTopic, txTopic] }).catch(() => undefined);
    const c = new Client({
      contactPoints: loaded.config.cassandra.contactPoints,
      localDataCenter: loaded.config.cassandra.localDataCenter,
    });
    await c.execute(`DROP KEYSPACE IF EXISTS ${loaded.config.cassandra.keyspace}`).catch(() => undefined);
    await c.shutdown().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

  try {
    step(2, `Creating topics ${ratesTopic} (3 partitions) and ${txTopic}`);
    await admin.createTopics({
      topics: [
        { topic: ratesTopic, numPartitions: 3 },
        { topic: txTopic, numPartitions: 1 },
      ],
      waitForLeaders: true,
    });

    const t0 = demoBaseTime();
    step(3, 'Producing the rates changelog (keyed by currency, JSON {rate, ts}); one change arrives out of order, one rate is deleted:');
    const producer = kafka.producer();
    await producer.connect();
    for (const r of rateChanges(t0)) {
      say(`    ${r.currency} ${r.rate === null ? 'tombstone' : r.rate.toFixed(4)} valid from ${hhmmss(r.at)} ${r.note}`);
      await producer.send({
        topic: ratesTopic,
        messages: [
          { key: r.currency, value: r.rate === null ? null : JSON.stringify({ rate: r.rate, ts: r.at }), timestamp: String(r.at) },
        ],
      });
    }
    const txs = transactions(t0);
    await producer.send({ topic: txTopic, messages: txs.map((t) => ({ key: t.id, value: JSON.stringify(t), timestamp: String(t.at) })) });
    await producer.disconnect();

    step(
      4,
      `Running the worker with config/demo.yaml (rates: bootstrap, versioned, global store; keyspace ${loaded.config.cassandra.keyspace})`,
    );
    worker = new Worker(loaded, { logger: createLogger(process.env.ADJUNCT_LOG_LEVEL ?? 'warn') });
    await worker.start();
    http = await httpStarter(worker);
    say(`    worker running; HTTP API on ${http?.address}`);

    step(5, 'Waiting until the rates store is READY (bootstrapped to the end offsets captured at start)…');
    lookup = await openLookup({ client: worker.cassandraClient!, keyspace: loaded.config.cassandra.keyspace });
    await lookup.waitUntilReady('rates', { timeoutMs: 120_000 });
    say('    rates: READY');

    step(6, 'Joining each transaction with the rate valid at its timestamp (lookup library, one Cassandra read each):');
    const rates = lookup.store<string, { rate: number; ts: number }>('rates');
    const consumer = kafka.consumer({ groupId: `adjunct-demo-tx-${run}` });
    await consumer.connect();
    await consumer.subscribe({ topics: [txTopic], fromBeginning: true });
    let seen = 0;
    await new Promise<void>((resolve, reject) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          try {
            const tx = JSON.parse(message.value!.toString()) as (typeof txs)[number];
            const r = await rates.get(tx.currency, tx.at);
            const joined = r
              ? `rate ${r.value.rate.toFixed(4)} (valid from ${hhmmss(r.timestamp!)}) → ${(tx.amount * r.value.rate).toFixed(2)} USD`
              : 'no rate valid at that time';
            say(`    ${tx.id} ${hhmmss(tx.at)} ${tx.amount} ${tx.currency}: ${joined}${tx.note ? `   [${tx.note}]` : ''}`);
            if (++seen === txs.length) resolve();
          } catch (e) {
            reject(e);
          }
        },
      });
    });
    await consumer.disconnect();

    step(7, 'The same lookups over HTTP:');
    const url = `${http?.address}/stores/rates/keys/EUR?asOf=${t0 + 2000}`;
    say(`    curl '${url}'`);
    const res = await fetch(url);
    say(`    → ${res.status} ${await res.text()}`);
    say(`    curl '${http?.address}/stores/rates/keys/EUR/history'`);
    const hist = await fetch(`${http?.address}/stores/rates/keys/EUR/history`);
    say(`    → ${hist.status} ${await hist.text()}`);
    say('\nDone. In your own service:  const rate = await (await openLookup({ client, keyspace })).store("rates").get("EUR", txTime);');
    return 0;
  } finally {
    await cleanup();
  }
}

if (require.main === module) {
  runDemo().then(
    (code) => process.exit(code),
    (e) => {
      console.error(`demo failed: ${(e as Error).stack ?? e}`);
      process.exit(1);
    },
  );
}
