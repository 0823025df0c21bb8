/**
 * Shared helpers of the fault-injection suite: profile sizes, realistic record generation, producing,
 * reading a topic back, the MemoryVersionedStore reference, Cassandra dumps and comparison, stack pause/resume.
 */
import { randomInt } from 'crypto';
import { Client } from 'cassandra-driver';
import { Admin, Kafka, Producer } from 'kafkajs';
import { ourPid } from '../../tools/devstack/process';
import { stackSettings } from '../../tools/devstack/endpoints';
import { MemoryVersionedStore } from '../../src/store/memory/memory-versioned-store';
import { serdeByName } from '../../src/store/serde';
import { PUT_RETURN_CODE_NOT_PUT } from '../../src/store/types';
import { withKafkaTimeout } from '../../src/kafka/kafka-retry';
import {
  committedOffsets,
  configDoc,
  eventually,
  names,
  pipelineGroup,
  StackFixture,
  useStack,
  writeConfigFile,
} from '../integration/worker/harness';
import { createTopic, readTopic, ReadRecord } from '../integration/helpers';
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
  // full: the 1,000 records of 1 MB of the brief; ci: 2,500 records whose 60 KB keys (150 MB in all) would overflow the
  // heap if the clean-up tracker held them all.
  bigRecords: { records: full ? 1000 : 2500, valueBytes: full ? 1_000_000 : 10_000, keyBytes: 60_000, partitions: 4 },
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

/** History retention of every fault-test store: far shorter than the spread of the generated timestamps. */
export const FAULT_RETENTION = '2m';
/** FAULT_RETENTION in ms. */
export const FAULT_RETENTION_MS = 2 * 60_000;
/** Spread of the generated timestamps (10 retentions), so versions expire and late records fall beyond grace. */
const GEN_SPAN_MS = 20 * 60_000;

/**
 * Realistic changelog records that exercise the versioned rules: timestamps 60 to 40 minutes in the past, spread over
 * 10 × FAULT_RETENTION, mostly increasing; ~5% out of order by up to 2 × FAULT_RETENTION (so about half of them are
 * beyond the grace period: NOT_PUT), ~3% tombstones, `keys` distinct keys. Every record carries its sequence number `i`.
 */
export function genRecords(n: number, keys: number, base = Date.now() - 60 * 60_000): GenRecord[] {
  const out: GenRecord[] = [];
  for (let i = 0; i < n; i++) {
    let ts = base + Math.floor((i * GEN_SPAN_MS) / n);
    if (randomInt(100) < 5) ts -= 1 + randomInt(2 * FAULT_RETENTION_MS);
    const key = `k${randomInt(keys)}`;
    const value = randomInt(100) < 3 ? null : JSON.stringify({ i, key, v: randomInt(1_000_000), note: 'x'.repeat(randomInt(40)) });
    out.push({ key, value, timestamp: ts });
  }
  return out;
}

/** How long one batch's send may take before the test's producer is said to hang and the batch is sent again. */
const SEND_TIMEOUT_MS = 60_000;

/** Sends records in batches (acks all); a failed batch (broker paused) is retried until it goes through. */
export async function produceAll(
  producer: Producer,
  topic: string,
  records: GenRecord[],
  opts: { batch?: number; pauseMs?: number; onBatch?: (sent: number) => void } = {},
): Promise<void> {
  const batch = opts.batch ?? 1000;
  for (let i = 0; i < records.length; i += batch) {
    const messages = records.slice(i, i + batch).map((r) => ({ key: r.key, value: r.value, timestamp: String(r.timestamp) }));
    for (let attempt = 1; ; attempt++) {
      try {
        // A send that never settles (a suspect in one CI failure after a broker freeze) fails, is noted and sent again.
        await withKafkaTimeout("the test producer's send", producer.send({ topic, acks: -1, messages }), SEND_TIMEOUT_MS);
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

/** A version in comparable form: `valid_from` and the value bytes as hex (`null` for a tombstone). */
type Versions = Map<string, Map<number, string>>;

/** What the reference computed: every key's versions, which of them have expired, and what the rules decided. */
export interface Reference {
  versions: Versions;
  /** `key@ts` of versions whose validTo ≤ their writer's horizon: the retention clean-up may have removed them. */
  expired: Set<string>;
  stores: Map<number, MemoryVersionedStore<string, unknown>>;
  applied: number;
  /** Puts older than the grace period (PUT_RETURN_CODE_NOT_PUT): must not be in the table. */
  notPut: number;
  tombstones: number;
}

/**
 * The reference: feeds the records (per partition, in offset order, one store per partition = one writer's stream
 * time, as the sink does) into MemoryVersionedStore with the store's serdes and retention, and returns every key's
 * versions. `extract` decides which records are valid (others are skipped, as a DLQ'd record is).
 */
export async function referenceVersions(
  records: ReadRecord[],
  historyRetentionMs: number,
  extract: (r: ReadRecord) => { key: string; value: unknown | null; timestamp: number } | null = defaultExtract,
): Promise<Reference> {
  const stores = new Map<number, MemoryVersionedStore<string, unknown>>();
  const json = serdeByName('json');
  // Every accepted put (the reference prunes expired versions itself; the table keeps them until its clean-up runs).
  const versions: Versions = new Map();
  let applied = 0;
  let notPut = 0;
  let tombstones = 0;
  for (const r of records) {
    const x = extract(r);
    if (x === null) continue;
    let s = stores.get(r.partition);
    if (!s)
      stores.set(
        r.partition,
        (s = new MemoryVersionedStore<string, unknown>({ historyRetentionMs, keySerde: serdeByName('string') as never, valueSerde: json })),
      );
    applied++;
    if ((await s.put(x.key, x.value, x.timestamp)) === PUT_RETURN_CODE_NOT_PUT) {
      notPut++;
      continue;
    }
    if (x.value === null) tombstones++;
    const m = versions.get(x.key) ?? new Map<number, string>();
    m.set(x.timestamp, x.value === null ? 'null' : Buffer.from(json.serialize(x.value)).toString('hex'));
    versions.set(x.key, m);
  }
  // Versions the reference still returns: kept by it and valid past its writer's horizon. All others have expired.
  const live = new Set<string>();
  for (const s of stores.values()) {
    const horizon = s.observedStreamTime() - historyRetentionMs;
    const entries = (s as unknown as { entries: Map<string, { versions: { ts: number; value: Buffer | null }[] }> }).entries;
    for (const [hexKey, e] of entries) {
      const key = Buffer.from(hexKey, 'hex').toString('utf8');
      e.versions.forEach((v, i) => {
        const validTo = e.versions[i + 1]?.ts;
        if (validTo === undefined || validTo > horizon) live.add(`${key}@${v.ts}`);
      });
    }
  }
  const expired = new Set<string>();
  for (const [key, m] of versions) for (const ts of m.keys()) if (!live.has(`${key}@${ts}`)) expired.add(`${key}@${ts}`);
  return { versions, expired, stores, applied, notPut, tombstones };
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

/**
 * True when two hex-encoded stored values are the same JSON value: the worker stores a JSON record's own bytes when it
 * keeps the whole value (pass-through), so the spacing may differ from the reference's serialisation.
 */
function sameJsonValue(aHex: string, bHex: string): boolean {
  const canonical = (hex: string): string | undefined => {
    try {
      return JSON.stringify(JSON.parse(Buffer.from(hex, 'hex').toString('utf8')));
    } catch {
      return undefined;
    }
  };
  const a = canonical(aHex);
  return a !== undefined && a === canonical(bHex);
}

/**
 * Differences between the store and the reference (first few shown), counting versions on both sides. Versions in
 * `mayBeGone` (expired: the retention clean-up removes them physically at its own pace) may be absent, never wrong.
 */
export function compareVersions(
  actual: Versions,
  expected: Versions,
  mayBeGone: ReadonlySet<string> = new Set(),
  show = 10,
): { expectedVersions: number; actualVersions: number; missing: number; extra: number; wrong: number; cleaned: number; samples: string[] } {
  let cleaned = 0;
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
      if (got === undefined && mayBeGone.has(`${k}@${ts}`)) {
        cleaned++;
        expectedVersions--;
      } else if (got === undefined) {
        missing++;
        if (samples.length < show) samples.push(`missing ${k}@${ts}`);
      } else if (got !== v && !sameJsonValue(got, v)) {
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
  return { expectedVersions, actualVersions, missing, extra, wrong, cleaned, samples };
}

const short = (hex: string) => (hex === 'null' ? 'null' : Buffer.from(hex, 'hex').toString('utf8').slice(0, 80));

/**
 * The KIP-968 view of both sides for every key: the reference's history(key) against the same query computed from
 * the dumped rows (non-tombstone versions with their validTo, hiding versions whose validTo ≤ the writer's horizon,
 * which the clean-up may or may not have removed yet). It checks the reference-facing API on top of the raw versions.
 */
export async function compareHistories(
  actual: Versions,
  stores: Map<number, MemoryVersionedStore<string, unknown>>,
  historyRetentionMs = FAULT_RETENTION_MS,
): Promise<number> {
  let bad = 0;
  for (const s of stores.values()) {
    const horizon = s.observedStreamTime() - historyRetentionMs;
    const entries = (s as unknown as { entries: Map<string, unknown> }).entries;
    for (const hexKey of entries.keys()) {
      const key = Buffer.from(hexKey, 'hex').toString('utf8');
      const want = (await s.history(key, { order: 'asc' })).map((r) => `${r.timestamp}:${r.validTo ?? '-'}:${JSON.stringify(r.value)}`);
      const rows = [...(actual.get(key) ?? new Map<number, string>())].sort((x, y) => x[0] - y[0]);
      const got: string[] = [];
      rows.forEach(([ts, v], i) => {
        const validTo = i + 1 < rows.length ? rows[i + 1][0] : '-';
        if (v === 'null' || (validTo !== '-' && validTo <= horizon)) return;
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
export async function pauseService(service: 'kafka' | 'cassandra' | 'registry', ms: number, during?: () => Promise<void>): Promise<void> {
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
  for (const s of ['kafka', 'cassandra', 'registry'] as const) {
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
export function workerDoc(
  n: { keyspace: string; group: string },
  pipelines: object[],
  kafka: Record<string, unknown> = {},
): Record<string, unknown> {
  const doc = configDoc(n.keyspace, n.group, pipelines, {
    kafka: { brokers: stackEndpoints().kafkaBrokers, clientId: n.group, sessionTimeout: 8000, heartbeatInterval: 1000, ...kafka },
  });
  (doc.worker as Record<string, unknown>).logLevel = 'info';
  return doc;
}

/** The worker process's exit, or null when it has not exited within ms. */
export async function exitWithin(w: WorkerProcess, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([w.exited, new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until a worker process printed a line matching re (fails early if it exits). */
export async function waitOutput(w: WorkerProcess, re: RegExp, timeoutMs = 120_000): Promise<void> {
  await eventually(
    async () => {
      if (re.test(w.output())) return true;
      if (w.child.exitCode !== null || w.child.signalCode !== null)
        throw new Error(`worker exited (${w.child.exitCode ?? w.child.signalCode}) before ${re}: ${w.output().slice(-2000)}`);
      return false;
    },
    timeoutMs,
    `worker output ${re}`,
  );
}

/**
 * With the group's writers stopped (killed or paused), checks that every record below the committed offsets that
 * the versioned rules keep has its version (key, timestamp) in the table: a commit never passed an unwritten record.
 * Records the reference (fed the whole topic) rejects as older than the grace period are not expected; an expired
 * version may be absent only below a newer version of its key (the clean-up keeps the one valid at the horizon). Also checks each writer's persisted stream time: at least
 * the stream time of the records below its committed offset. Returns how many records were checked, and how many of
 * the whole topic's records the rules keep (`kept`: equal to `checked` once everything is committed).
 */
export async function checkBelowCommitted(
  kafka: Kafka,
  admin: Admin,
  client: Client,
  topic: string,
  group: string,
  keyspace: string,
  table: string,
  extract: Parameters<typeof referenceVersions>[2] = defaultExtract,
): Promise<{ checked: number; kept: number; missing: string[]; streamTimeBehind: string[] }> {
  const committed = await committedOffsets(admin, group, topic);
  // Nothing committed yet (killed during start-up): nothing to check, and the table may not exist yet.
  if (![...committed.values()].some((o) => o > 0n)) return { checked: 0, kept: 0, missing: [], streamTimeBehind: [] };
  const all = await readTopic(kafka, admin, topic);
  const rows = await dumpTable(client, keyspace, table);
  const ref = await referenceVersions(all, FAULT_RETENTION_MS, extract);
  const below = all.filter((r) => r.offset < (committed.get(r.partition) ?? 0n));
  const prefix = await referenceVersions(below, FAULT_RETENTION_MS, extract);
  const missing: string[] = [];
  let checked = 0;
  const kept = all.filter((r) => {
    const x = extract(r);
    return x !== null && ref.versions.get(x.key)?.has(x.timestamp);
  }).length;
  for (const r of below) {
    const x = extract(r);
    if (x === null || !ref.versions.get(x.key)?.has(x.timestamp)) continue;
    checked++;
    const versions = rows.get(x.key);
    if (versions?.has(x.timestamp)) continue;
    // The clean-up removes an expired version only below a newer one it keeps (the one valid at the horizon).
    const shadowed = ref.expired.has(`${x.key}@${x.timestamp}`) && [...(versions?.keys() ?? [])].some((ts) => ts > x.timestamp);
    if (!shadowed && missing.length < 10) missing.push(`${r.partition}@${r.offset} ${x.key}@${x.timestamp}`);
  }
  const persisted = await persistedStreamTimes(client, keyspace, table, topic);
  const streamTimeBehind: string[] = [];
  for (const [p, s] of prefix.stores) {
    const got = persisted.get(p) ?? Number.NEGATIVE_INFINITY;
    if (got < s.observedStreamTime())
      streamTimeBehind.push(`partition ${p}: persisted ${got} < ${s.observedStreamTime()} as of offset ${committed.get(p)}`);
  }
  return { checked, kept, missing, streamTimeBehind };
}

/** Each writer's persisted stream time (`adjunct_stream_time`, writer `<topic>:<partition>`) of a table, by partition. */
export async function persistedStreamTimes(client: Client, keyspace: string, table: string, topic: string): Promise<Map<number, number>> {
  const rs = await client.execute(`SELECT writer, stream_time FROM ${keyspace}.adjunct_stream_time WHERE store = ?`, [table], {
    prepare: true,
  });
  const out = new Map<number, number>();
  for (const row of rs.rows) {
    const writer = row.get('writer') as string;
    if (writer.startsWith(`${topic}:`)) out.set(Number(writer.slice(topic.length + 1)), Number(row.get('stream_time').toString()));
  }
  return out;
}

/**
 * Final check, with every writer of the table stopped or caught up: the table equals the reference computed from the
 * topic with FAULT_RETENTION (versioned decisions included: late puts beyond grace absent, expired versions hidden,
 * tombstones present), and every writer's persisted stream time equals the reference's for its partition.
 * Returns the comparison for the report.
 */
export async function expectTableEqualsReference(
  kafka: Kafka,
  admin: Admin,
  client: Client,
  topic: string,
  keyspace: string,
  table: string,
  extract?: Parameters<typeof referenceVersions>[2],
): Promise<TableCheck> {
  const all = await readTopic(kafka, admin, topic);
  const ref = await referenceVersions(all, FAULT_RETENTION_MS, extract);
  // The data must exercise the versioned rules, or this check proves only the rows.
  expect(ref.notPut).toBeGreaterThan(0);
  expect(ref.expired.size).toBeGreaterThan(0);
  expect(ref.tombstones).toBeGreaterThan(0);
  return { ...(await expectTableEquals(client, topic, keyspace, table, ref)), records: all.length, ref };
}

/** What expectTableEqualsReference compared, with the reference itself (to check the table against it again later). */
export type TableCheck = ReturnType<typeof compareVersions> & {
  records: number;
  notPut: number;
  expired: number;
  tombstones: number;
  ref: Reference;
};

/**
 * The table equals a reference already computed (expired versions may be present or not: the clean-up runs in the
 * background), and every writer's persisted stream time equals the reference's for its partition.
 */
export async function expectTableEquals(client: Client, topic: string, keyspace: string, table: string, ref: Reference) {
  const rows = await dumpTable(client, keyspace, table);
  const diff = compareVersions(rows, ref.versions, ref.expired);
  expect(diff).toMatchObject({ missing: 0, extra: 0, wrong: 0, samples: [] });
  expect(diff.actualVersions).toBe(diff.expectedVersions);
  expect(await compareHistories(rows, ref.stores)).toBe(0);
  const persisted = await persistedStreamTimes(client, keyspace, table, topic);
  expect(Object.fromEntries(persisted)).toEqual(Object.fromEntries([...ref.stores].map(([p, s]) => [p, s.observedStreamTime()])));
  return { ...diff, notPut: ref.notPut, expired: ref.expired.size, tombstones: ref.tombstones };
}

/**
 * The fixture of a fault test: frozen services are resumed first (before workers and clients close), then the usual
 * clean-up. Its producers are plain: a fault test compares Cassandra with what Kafka holds, duplicates included, and a
 * send must survive a broker frozen or killed under it, which an idempotent kafkajs producer may give up on.
 */
export function useFaultStack(): StackFixture {
  afterAll(resumeAllServices); // jest-circus runs afterAll hooks in declaration order
  return useStack({});
}

/** A worker process under a steady load: its names, config file, records, the load still being sent, and when it started. */
export interface WorkerUnderLoad {
  n: ReturnType<typeof names>;
  group: string;
  file: string;
  w: WorkerProcess;
  records: GenRecord[];
  load: Promise<void>;
  sent: () => number;
  t0: number;
}

/** A worker process under a steady load of about 40 batches one second apart, already a quarter sent and committing. */
export async function startWorkerUnderLoad(
  stack: StackFixture,
  prefix: string,
  size: { records: number; keys: number; partitions: number },
  pipeline: Record<string, unknown> = {},
): Promise<WorkerUnderLoad> {
  const n = names(prefix);
  await createTopic(stack.kafka, n.topic, size.partitions);
  const t0 = Date.now();
  const file = writeConfigFile(
    workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: FAULT_RETENTION }, ...pipeline }]),
  );
  const group = pipelineGroup(n.group, 'p');
  const w = stack.spawn(file);
  await waitOutput(w, /worker running/);
  const records = genRecords(size.records, size.keys);
  const producer = await stack.producer();
  let sent = 0;
  const load = produceAll(producer, n.topic, records, { batch: Math.ceil(records.length / 40), pauseMs: 1000, onBatch: (c) => (sent = c) });
  await eventually(
    async () => sent >= records.length / 4 && totalOf(await committedOffsets(stack.admin, group, n.topic)) > 0n,
    120_000,
    'load under way',
  );
  return { n, group, file, w, records, load, sent: () => sent, t0 };
}
