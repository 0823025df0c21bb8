/**
 * Shared helpers of the fault-injection suite: profile sizes, realistic record generation, producing,
 * reading a topic back, the MemoryVersionedStore reference, Cassandra dumps and comparison, stack pause/resume.
 */
import { randomInt } from 'crypto';
import { Client } from 'cassandra-driver';
import { Admin, Kafka, KafkaMessage, Producer } from 'kafkajs';
import { ourPid } from '../../tools/devstack/process';
import { stackSettings } from '../../tools/devstack/endpoints';
import { MemoryVersionedStore } from '../../src/store/memory/memory-versioned-store';
import { serdeByName } from '../../src/store/serde';
import { committedOffsets, configDoc, eventually, names, pipelineGroup, StackFixture, useStack, writeConfigFile } from '../integration/worker/harness';
import { createTopic } from '../integration/helpers';
import { WorkerProcess } from '../integration/worker/processes';
import { stackEndpoints } from '../../tools/devstack/endpoints';

/** `full` = the sizes of the brief; `ci` (default) = reduced to fit in a few minutes. */
export const PROFILE: 'full' | 'ci' = process.env.ADJUNCT_FAULT_PROFILE === 'full' ? 'full' : 'ci';
const full = PROFILE === 'full';

/** Sizes per test and profile. */
export const SIZES = {
  kill9: { records: full ? 200_000 : 20_000, kills: full ? 10 : 3, keys: 1000, partitions: 4 },
  cassandraOutage: { records: full ? 60_000 : 20_000, outageMs: 20_000, keys: 500, partitions: 3 },
  kafkaPause: { records: full ? 60_000 : 20_000, outageMs: 15_000, keys: 500, partitions: 3 },
  rebalance: { records: full ? 90_000 : 24_000, keys: 800, partitions: 6 },
  poison: { valid: full ? 10_000 : 1_000, bad: full ? 1_000 : 100, keys: full ? 1000 : 100, partitions: 3 },
};

/** Progress output of long tests (stderr, so it shows under jest). */
export function note(msg: string): void {
  process.stderr.write(`[faults ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One produced changelog record: string key, JSON value text (null = tombstone), record timestamp in ms. */
export interface GenRecord {
  key: string;
  value: string | null;
  timestamp: number;
}

/**
 * Realistic changelog records: timestamps a few minutes to ~1 h in the past, mostly increasing, ~5% out of order
 * (up to a minute back), ~2% tombstones, `keys` distinct keys. Every record carries its sequence number `i`.
 */
export function genRecords(n: number, keys: number, base = Date.now() - 60 * 60_000): GenRecord[] {
  const out: GenRecord[] = [];
  const span = Math.min(50 * 60_000, Math.max(n * 3, 60_000)); // keep the newest record well in the past
  for (let i = 0; i < n; i++) {
    let ts = base + Math.floor((i * span) / n);
    if (randomInt(100) < 5) ts -= 1 + randomInt(60_000);
    const key = `k${randomInt(keys)}`;
    const value = randomInt(100) < 2 ? null : JSON.stringify({ i, key, v: randomInt(1_000_000), note: 'x'.repeat(randomInt(40)) });
    out.push({ key, value, timestamp: ts });
  }
  return out;
}

/** Sends records in batches (acks all); a failed batch (broker paused) is retried until it goes through. */
export async function produceAll(producer: Producer, topic: string, records: GenRecord[], opts: { batch?: number; pauseMs?: number; onBatch?: (sent: number) => void } = {}): Promise<void> {
  const batch = opts.batch ?? 1000;
  for (let i = 0; i < records.length; i += batch) {
    const messages = records.slice(i, i + batch).map((r) => ({ key: r.key, value: r.value, timestamp: String(r.timestamp) }));
    for (let attempt = 1; ; attempt++) {
      try {
        await producer.send({ topic, acks: -1, messages });
        break;
      } catch (e) {
        if (attempt > 60) throw e;
        note(`produce batch ${i / batch} failed (attempt ${attempt}): ${(e as Error).message}; retrying`);
        await sleep(1000);
      }
    }
    opts.onBatch?.(Math.min(i + batch, records.length));
    if (opts.pauseMs) await sleep(opts.pauseMs);
  }
}

/** A record as read back from Kafka, with its coordinates. */
export interface ReadRecord {
  partition: number;
  offset: bigint;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: number;
  headers: KafkaMessage['headers'];
}

/** Reads a whole topic (every partition up to its current end offset), sorted by partition then offset. */
export async function readTopic(kafka: Kafka, admin: Admin, topic: string, timeoutMs = 180_000): Promise<ReadRecord[]> {
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
  const total = [...ends.values()].reduce((a, b) => a + b, 0n);
  const out: ReadRecord[] = [];
  if (total === 0n) return out;
  const consumer = kafka.consumer({ groupId: `faults-reader-${topic}-${Date.now()}-${randomInt(1e9)}`, maxBytesPerPartition: 4 << 20, maxBytes: 16 << 20 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const seen = new Map<number, bigint>();
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const check = () => {
    if ([...ends].every(([p, e]) => e === 0n || (seen.get(p) ?? -1n) >= e - 1n)) done();
  };
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        const o = BigInt(m.offset);
        if (o >= (ends.get(batch.partition) ?? 0n)) continue;
        out.push({ partition: batch.partition, offset: o, key: m.key ?? null, value: m.value ?? null, timestamp: Number(m.timestamp), headers: m.headers });
        seen.set(batch.partition, o);
      }
      check();
    },
  });
  const timer = setTimeout(() => done(), timeoutMs);
  await finished;
  clearTimeout(timer);
  await consumer.disconnect();
  // A consumer may see a record twice around a rebalance: dedupe by coordinates before counting.
  const uniq = new Map<string, ReadRecord>();
  for (const r of out) uniq.set(`${r.partition}:${r.offset}`, r);
  const got = BigInt(uniq.size);
  if (got < total) throw new Error(`read ${got} of ${total} records of ${topic} within ${timeoutMs} ms`);
  return [...uniq.values()].sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
}

/** A version in comparable form: `valid_from` and the value bytes as hex (`null` for a tombstone). */
type Versions = Map<string, Map<number, string>>;

/**
 * The reference: feeds the records (per partition, in offset order, one store per partition = one writer's stream
 * time, as the sink does) into MemoryVersionedStore with the store's serdes, and returns every key's versions.
 * `accept` decides which records are valid (others are skipped, as a DLQ'd record is).
 */
export async function referenceVersions(records: ReadRecord[], historyRetentionMs: number, extract: (r: ReadRecord) => { key: string; value: unknown | null; timestamp: number } | null = defaultExtract): Promise<{ versions: Versions; stores: Map<number, MemoryVersionedStore<string, unknown>>; applied: number }> {
  const stores = new Map<number, MemoryVersionedStore<string, unknown>>();
  let applied = 0;
  for (const r of records) {
    const x = extract(r);
    if (x === null) continue;
    let s = stores.get(r.partition);
    if (!s) stores.set(r.partition, (s = new MemoryVersionedStore<string, unknown>({ historyRetentionMs, keySerde: serdeByName('string') as never, valueSerde: serdeByName('json') })));
    await s.put(x.key, x.value, x.timestamp);
    applied++;
  }
  const versions: Versions = new Map();
  for (const s of stores.values()) {
    // The reference keeps every version (including tombstones) in a private map: read it for an exact comparison.
    const entries = (s as unknown as { entries: Map<string, { versions: { ts: number; value: Buffer | null }[] }> }).entries;
    for (const [hexKey, e] of entries) {
      const key = Buffer.from(hexKey, 'hex').toString('utf8');
      const m = versions.get(key) ?? new Map<number, string>();
      for (const v of e.versions) m.set(v.ts, v.value === null ? 'null' : v.value.toString('hex'));
      versions.set(key, m);
    }
  }
  return { versions, stores, applied };
}

/** Default extraction of the generated records: string key, JSON value (null = tombstone), record timestamp. */
export function defaultExtract(r: ReadRecord): { key: string; value: unknown | null; timestamp: number } {
  return { key: r.key!.toString('utf8'), value: r.value === null ? null : JSON.parse(r.value.toString('utf8')), timestamp: r.timestamp };
}

/** Every row of a versioned table, grouped by key. */
export async function dumpTable(client: Client, keyspace: string, table: string): Promise<Versions> {
  const out: Versions = new Map();
  let pageState: string | undefined;
  do {
    const rs = await client.execute(`SELECT key, valid_from, value FROM ${keyspace}.${table}`, [], { fetchSize: 5000, pageState });
    pageState = rs.pageState ?? undefined;
    for (const row of rs.rows) {
      const key = (row.get('key') as Buffer).toString('utf8');
      const v = row.get('value') as Buffer | null;
      const m = out.get(key) ?? new Map<number, string>();
      m.set(Number(row.get('valid_from').toString()), v === null ? 'null' : v.toString('hex'));
      out.set(key, m);
    }
  } while (pageState);
  return out;
}

/** Differences between the store and the reference (first few shown), counting versions on both sides. */
export function compareVersions(actual: Versions, expected: Versions, show = 10): { expectedVersions: number; actualVersions: number; missing: number; extra: number; wrong: number; samples: string[] } {
  let missing = 0;
  let extra = 0;
  let wrong = 0;
  let expectedVersions = 0;
  let actualVersions = 0;
  const samples: string[] = [];
  const keys = new Set([...actual.keys(), ...expected.keys()]);
  for (const k of keys) {
    const a = actual.get(k) ?? new Map<number, string>();
    const e = expected.get(k) ?? new Map<number, string>();
    expectedVersions += e.size;
    actualVersions += a.size;
    for (const [ts, v] of e) {
      const got = a.get(ts);
      if (got === undefined) {
        missing++;
        if (samples.length < show) samples.push(`missing ${k}@${ts}`);
      } else if (got !== v) {
        wrong++;
        if (samples.length < show) samples.push(`wrong ${k}@${ts}: got ${short(got)} want ${short(v)}`);
      }
    }
    for (const ts of a.keys()) {
      if (!e.has(ts)) {
        extra++;
        if (samples.length < show) samples.push(`extra ${k}@${ts}`);
      }
    }
  }
  return { expectedVersions, actualVersions, missing, extra, wrong, samples };
}

const short = (hex: string) => (hex === 'null' ? 'null' : Buffer.from(hex, 'hex').toString('utf8').slice(0, 80));

/**
 * The KIP-968 view of both sides for every key: the reference's history(key) against the same query computed from
 * the dumped rows (non-tombstone versions with their validTo). Nothing expires in these tests (7 d retention), so
 * this must agree exactly; it checks the reference-facing API on top of the raw version comparison.
 */
export async function compareHistories(actual: Versions, stores: Map<number, MemoryVersionedStore<string, unknown>>): Promise<number> {
  let bad = 0;
  for (const s of stores.values()) {
    const entries = (s as unknown as { entries: Map<string, unknown> }).entries;
    for (const hexKey of entries.keys()) {
      const key = Buffer.from(hexKey, 'hex').toString('utf8');
      const want = (await s.history(key)).map((r) => `${r.timestamp}:${r.validTo ?? '-'}:${JSON.stringify(r.value)}`);
      const rows = [...(actual.get(key) ?? new Map<number, string>())].sort((x, y) => x[0] - y[0]);
      const got: string[] = [];
      rows.forEach(([ts, v], i) => {
        if (v === 'null') return;
        const validTo = i + 1 < rows.length ? rows[i + 1][0] : '-';
        got.push(`${ts}:${validTo}:${JSON.stringify(JSON.parse(Buffer.from(v, 'hex').toString('utf8')))}`);
      });
      if (JSON.stringify(want) !== JSON.stringify(got)) bad++;
    }
  }
  return bad;
}

/** Samples a group's committed offsets every `everyMs` until stopped (errors while a broker is paused are recorded as gaps). */
export function sampleCommitted(admin: Admin, group: string, topic: string, everyMs = 500) {
  const samples: { at: number; offsets: Map<number, bigint> | null }[] = [];
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      try {
        samples.push({ at: Date.now(), offsets: await committedOffsets(admin, group, topic) });
      } catch {
        samples.push({ at: Date.now(), offsets: null });
      }
      await sleep(everyMs);
    }
  })();
  return {
    samples,
    async stop() {
      stop = true;
      await loop;
    },
  };
}

/** Total of a group's committed offsets on a topic (partitions without a commit count 0). */
export function totalOf(offsets: Map<number, bigint>): bigint {
  return [...offsets.values()].reduce((a, o) => a + (o > 0n ? o : 0n), 0n);
}

/** The pid of one stack service (kafka, cassandra, registry), verified by its command-line marker. */
export function servicePid(service: 'kafka' | 'cassandra' | 'registry'): number {
  const pid = ourPid(stackSettings().stackDir, service);
  if (pid === undefined) throw new Error(`stack service ${service} is not running`);
  return pid;
}

/**
 * Freezes a stack service with SIGSTOP for `ms` (clients see a real outage: connections stay open, nothing answers),
 * then SIGCONT. The returned promise resolves after the resume; a finally-guard always resumes it.
 */
export async function pauseService(service: 'kafka' | 'cassandra', ms: number, during?: () => Promise<void>): Promise<void> {
  const pid = servicePid(service);
  note(`SIGSTOP ${service} (pid ${pid}) for ${ms} ms`);
  process.kill(pid, 'SIGSTOP');
  try {
    await Promise.all([sleep(ms), during?.()]);
  } finally {
    process.kill(pid, 'SIGCONT');
    note(`SIGCONT ${service} (pid ${pid})`);
  }
}

/** Safety net: make sure no stack service stays frozen if a test aborts mid-outage. */
export function resumeAllServices(): void {
  for (const s of ['kafka', 'cassandra'] as const) {
    try {
      process.kill(servicePid(s), 'SIGCONT');
    } catch {
      /* not running */
    }
  }
}

/**
 * A worker config for process tests: info logs (the tests wait for "worker running"), a short Kafka session so a
 * killed member is evicted quickly, and a bounded retry timeout.
 */
export function workerDoc(n: { keyspace: string; group: string }, pipelines: object[], kafka: Record<string, unknown> = {}): Record<string, unknown> {
  const doc = configDoc(n.keyspace, n.group, pipelines, { kafka: { brokers: stackEndpoints().kafkaBrokers, clientId: n.group, sessionTimeout: 8000, heartbeatInterval: 1000, ...kafka } });
  (doc.worker as Record<string, unknown>).logLevel = 'info';
  return doc;
}

/** Waits until a worker process printed a line matching re (fails early if it exits). */
export async function waitOutput(w: WorkerProcess, re: RegExp, timeoutMs = 120_000): Promise<void> {
  await eventually(async () => {
    if (re.test(w.output())) return true;
    if (w.child.exitCode !== null || w.child.signalCode !== null) throw new Error(`worker exited (${w.child.exitCode ?? w.child.signalCode}) before ${re}: ${w.output().slice(-2000)}`);
    return false;
  }, timeoutMs, `worker output ${re}`);
}

/**
 * With the group's writers stopped (killed or paused), checks that every record below the committed offsets has its
 * version (key, timestamp) in the table: a commit never passed an unwritten record. Returns how many were checked.
 */
export async function checkBelowCommitted(kafka: Kafka, admin: Admin, client: Client, topic: string, group: string, keyspace: string, table: string, keyOf: (r: ReadRecord) => string | null = (r) => r.key?.toString('utf8') ?? null): Promise<{ checked: number; missing: string[] }> {
  const committed = await committedOffsets(admin, group, topic);
  const all = await readTopic(kafka, admin, topic);
  const rows = await dumpTable(client, keyspace, table);
  const below = all.filter((r) => r.offset < (committed.get(r.partition) ?? 0n));
  const missing: string[] = [];
  let checked = 0;
  for (const r of below) {
    const k = keyOf(r);
    if (k === null) continue;
    checked++;
    if (!rows.get(k)?.has(r.timestamp) && missing.length < 10) missing.push(`${r.partition}@${r.offset} ${k}@${r.timestamp}`);
  }
  return { checked, missing };
}

/** Final check: the whole table equals the reference computed from the topic; returns the comparison for the report. */
export async function expectTableEqualsReference(kafka: Kafka, admin: Admin, client: Client, topic: string, keyspace: string, table: string, extract?: Parameters<typeof referenceVersions>[2]): Promise<ReturnType<typeof compareVersions> & { records: number }> {
  const all = await readTopic(kafka, admin, topic);
  const ref = await referenceVersions(all, 7 * 86_400_000, extract);
  const rows = await dumpTable(client, keyspace, table);
  const diff = compareVersions(rows, ref.versions);
  expect(diff).toMatchObject({ missing: 0, extra: 0, wrong: 0, samples: [] });
  expect(diff.actualVersions).toBe(diff.expectedVersions);
  expect(await compareHistories(rows, ref.stores)).toBe(0);
  return { ...diff, records: all.length };
}

/** The fixture of an outage test: frozen services are resumed first (before workers and clients close), then the usual clean-up. */
export function useFaultStack(): StackFixture {
  afterAll(resumeAllServices); // jest-circus runs afterAll hooks in declaration order
  return useStack();
}

/** A worker process under a steady load of about 40 batches one second apart, already a quarter sent and committing. */
export async function startWorkerUnderLoad(
  stack: StackFixture,
  prefix: string,
  size: { records: number; keys: number; partitions: number },
  pipeline: Record<string, unknown> = {},
): Promise<{ n: ReturnType<typeof names>; group: string; file: string; w: WorkerProcess; records: GenRecord[]; load: Promise<void>; sent: () => number; t0: number }> {
  const n = names(prefix);
  await createTopic(stack.kafka, n.topic, size.partitions);
  const t0 = Date.now();
  const file = writeConfigFile(workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' }, ...pipeline }]));
  const group = pipelineGroup(n.group, 'p');
  const w = stack.spawn(file);
  await waitOutput(w, /worker running/);
  const records = genRecords(size.records, size.keys);
  const producer = await stack.producer();
  let sent = 0;
  const load = produceAll(producer, n.topic, records, { batch: Math.ceil(records.length / 40), pauseMs: 1000, onBatch: (c) => (sent = c) });
  await eventually(async () => sent >= records.length / 4 && totalOf(await committedOffsets(stack.admin, group, n.topic)) > 0n, 120_000, 'load under way');
  return { n, group, file, w, records, load, sent: () => sent, t0 };
}
