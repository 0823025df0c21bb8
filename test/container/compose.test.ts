/**
 * The container test: the real docker-compose.yml, with images swapped for local stand-ins and host networking
 * (tools/container/compose.host.yml), on a real Docker engine. Run with `npm run test:container` (prepares engine and images).
 * Proves: the compose file creates its topics, every healthcheck goes healthy, the worker reaches READY without any
 * environment variable set (admin routes off, said at startup), lookups answer over HTTP, `docker compose restart worker`
 * resumes without losing a record, and `docker stop` drains (SIGTERM, exit code 0, processed records committed).
 */
import { Kafka, logLevel, Producer } from 'kafkajs';
import { api, compose, containerId, logs, PORTS, run, state, waitFor } from './compose-driver';

const TOPIC = 'currency-rates';
const DLQ = 'adjunct-dlq-rates';
const KEYS = ['EUR', 'GBP', 'JPY', 'CHF', 'SEK', 'NOK'];

const kafka = new Kafka({
  clientId: 'adjunct-container-test',
  brokers: [`127.0.0.1:${PORTS.ADJUNCT_KAFKA_PORT}`],
  logLevel: logLevel.NOTHING,
});
let producer: Producer;

/** Every version produced so far, per key: timestamp -> rate. */
const produced = new Map<string, Map<number, number>>();
let nextTs = Date.parse('2026-01-01T00:00:00Z');

/** Produces one version for every key (increasing timestamps) and remembers it. */
async function produceRound(round: number): Promise<void> {
  const messages = KEYS.map((key, i) => {
    const ts = (nextTs += 1000);
    const rate = round * 100 + i;
    if (!produced.has(key)) produced.set(key, new Map());
    produced.get(key)!.set(ts, rate);
    return { key, value: JSON.stringify({ rate, ts }) };
  });
  await producer.send({ topic: TOPIC, messages });
}

interface Version {
  value: { rate: number };
  timestamp: number;
}

/** True when the store's history of every key holds exactly the versions produced so far. */
async function storeHoldsEverything(): Promise<true | undefined> {
  for (const [key, versions] of produced) {
    const res = await api('GET', `/stores/rates/keys/${key}/history`);
    if (res.status !== 200) return undefined;
    const got = new Map((res.body as { versions: Version[] }).versions.map((v) => [v.timestamp, v.value.rate]));
    if (got.size !== versions.size) return undefined;
    for (const [ts, rate] of versions) if (got.get(ts) !== rate) return undefined;
  }
  return true;
}

async function endOffsets(): Promise<Map<number, string>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return new Map((await admin.fetchTopicOffsets(TOPIC)).map((p) => [p.partition, p.high]));
  } finally {
    await admin.disconnect();
  }
}

/** The consumer group the worker's pipeline uses, as its 'pipeline started' log line names it. */
function pipelineGroup(workerLogs: string): string {
  const started = workerLogs
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg?: string; groupId?: string })
    .filter((l) => l.msg === 'pipeline started' && l.groupId);
  if (started.length === 0) throw new Error('no "pipeline started" line in the worker logs');
  return started[started.length - 1].groupId!;
}

async function committedOffsets(groupId: string): Promise<Map<number, string>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId, topics: [TOPIC] });
    return new Map(t.partitions.map((p) => [p.partition, p.offset]));
  } finally {
    await admin.disconnect();
  }
}

beforeAll(async () => {
  await compose('down', '-v', '--remove-orphans');
  await compose('build', 'worker');
  // `up -d` itself waits for the depends_on conditions: kafka healthy -> topics exited 0 -> worker started.
  await compose('up', '-d');
  producer = kafka.producer();
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect().catch(() => undefined);
  if (process.env.ADJUNCT_CONTAINER_KEEP === '1') return;
  await compose('down', '-v', '--remove-orphans').catch((e: unknown) => console.error(e));
});

it('creates the topics and the dead-letter topic from the compose file (init step exits 0)', async () => {
  const topics = await state('topics');
  expect(topics).toMatchObject({ Status: 'exited', ExitCode: 0 });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const meta = await admin.fetchTopicMetadata({ topics: [TOPIC, DLQ] });
    expect(meta.topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual([
      [DLQ, 1],
      [TOPIC, 3],
    ]);
  } finally {
    await admin.disconnect();
  }
  expect(await logs('topics')).toContain(`Created topic ${TOPIC}`);
});

it('brings every healthcheck to healthy', async () => {
  for (const service of ['kafka', 'cassandra', 'registry', 'worker']) {
    const health = await waitFor(`${service} healthy`, async () => {
      const s = await state(service);
      if (!s.Running) throw new Error(`${service} is ${s.Status} (exit code ${s.ExitCode})`);
      return s.Health?.Status === 'healthy' ? s.Health.Status : undefined;
    });
    expect(health).toBe('healthy');
  }
});

it('reaches READY with no environment variable set, and says at startup that the admin routes are off', async () => {
  const ready = await waitFor('worker /readyz 200', async () => {
    const res = await api('GET', '/readyz');
    return res.status === 200 ? res.body : undefined;
  });
  expect(ready).toEqual({ ready: true });
  expect(await logs('worker')).toContain('admin routes are off');
  const pause = await api('POST', '/pipelines/rates/pause');
  expect(pause.status).toBe(403);
  expect(pause.body).toMatchObject({ error: 'ADMIN_DISABLED' });
});

it('answers lookups over HTTP for records produced to the topic', async () => {
  await produceRound(1);
  await produceRound(2);
  await waitFor('both rounds in the store', storeHoldsEverything);
  const res = await api('GET', '/stores/rates/keys/EUR');
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ store: 'rates', key: 'EUR', value: { rate: 200 }, timestamp: Math.max(...produced.get('EUR')!.keys()) });
  const asOf = Math.min(...produced.get('EUR')!.keys());
  expect((await api('GET', `/stores/rates/keys/EUR?asOf=${asOf}`)).body).toMatchObject({ value: { rate: 100 }, timestamp: asOf });
});

it('resumes after `docker compose restart worker` without losing a record', async () => {
  const before = await state('worker');
  await produceRound(3);
  await compose('restart', 'worker');
  await produceRound(4);
  const after = await state('worker');
  expect(after.StartedAt).not.toBe(before.StartedAt);
  await waitFor('worker /readyz 200 after restart', async () => ((await api('GET', '/readyz')).status === 200 ? true : undefined));
  await produceRound(5);
  await expect(waitFor('every round in the store after the restart', storeHoldsEverything)).resolves.toBe(true);
  expect([...produced.values()].every((v) => v.size === 5)).toBe(true);
});

it('drains on `docker stop`: SIGTERM, exit code 0, every processed record committed', async () => {
  await produceRound(6);
  await waitFor('round 6 in the store', storeHoldsEverything);
  const id = await containerId('worker');
  await run('docker', ['stop', '--time', '60', id]);
  const stopped = await state('worker');
  expect(stopped).toMatchObject({ Running: false, ExitCode: 0, OOMKilled: false });
  const out = await logs('worker');
  expect(out).toContain('shutdown requested: draining in-flight writes and committing');
  expect(out).toContain('"signal":"SIGTERM"');
  expect(out).toContain('worker stopped');
  // Everything was processed before the stop, so a drained worker has committed up to the end of every partition.
  expect(await committedOffsets(pipelineGroup(out))).toEqual(await endOffsets());
});
