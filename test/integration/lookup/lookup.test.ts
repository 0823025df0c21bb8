import { Client } from 'cassandra-driver';
import { PipelineStatusTable } from '../../../src/catalog';
import { generationTable, StoreCatalog } from '../../../src/generations';
import { AdjunctError } from '../../../src/errors';
import { Lookup, openLookup, ReadyTimeoutError } from '../../../src/lookup';
import { cleanUp, newCassandraClient, uniqueName } from '../helpers';
import { collect, countExecutes, prepareKeyspace, seed, StoreShape, switchGeneration, Write } from './fixtures';

jest.setTimeout(180_000);

const keyspace = uniqueName('it_lookup');
let client: Client;
let lookup: Lookup;
const extraClients: Client[] = [];
async function extraClient(): Promise<Client> {
  const c = await newCassandraClient();
  extraClients.push(c);
  return c;
}

const vGlobal: StoreShape = { store: 'customers', kind: 'versioned', scope: 'global', historyRetentionMs: 1_000_000 };
const vEdges: StoreShape = { ...vGlobal, store: 'customers.edges', edges: true };
const vPart: StoreShape = { store: 'orders.by-id', kind: 'versioned', scope: 'partitioned', historyRetentionMs: 1_000_000 };
const vPartOld: StoreShape = { ...vPart, store: 'orders.unbucketed', unbucketed: true };
const vShort: StoreShape = { store: 'short-retention', kind: 'versioned', scope: 'global', historyRetentionMs: 1000 };
const vMultiG: StoreShape = { store: 'multi-writer-g', kind: 'versioned', scope: 'global', historyRetentionMs: 1000 };
const vMultiP: StoreShape = { store: 'multi-writer-p', kind: 'versioned', scope: 'partitioned', historyRetentionMs: 1000 };
// Partition 0 is far ahead (stream time 10,000, horizon 9,000); partition 1 is behind (stream time 100).
const multiWriter: Write[] = [
  { key: 'slow', value: 's1', ts: 50, partition: 1 },
  { key: 'slow', value: 's2', ts: 80, partition: 1 },
  { key: 'slow', value: null, ts: 100, partition: 1 },
  { key: 'fast', value: 'f1', ts: 100, partition: 0 },
  { key: 'fast', value: 'f2', ts: 9500, partition: 0 },
  { key: 'ahead', value: 'x', ts: 10_000, partition: 0 },
];
const kvGlobal: StoreShape = { store: 'kv-global', kind: 'kv', scope: 'global' };
const kvPart: StoreShape = { store: 'kv-part', kind: 'kv', scope: 'partitioned' };
const kvPartOld: StoreShape = { ...kvPart, store: 'kv-part-unbucketed', unbucketed: true };
const kvTuple: StoreShape = { store: 'kv-tuple', kind: 'kv', scope: 'global', keySerde: 'tuple' };
const kvBig: StoreShape = { store: 'kv-big', kind: 'kv', scope: 'global', keySerde: 'int64' };

const history: Write[] = [
  { key: 'k1', value: { v: 1 }, ts: 100 },
  { key: 'k1', value: { v: 2 }, ts: 200 },
  { key: 'k1', value: null, ts: 300 },
  { key: 'k1', value: { v: 4 }, ts: 400 },
  { key: 'k2', value: { v: 'only' }, ts: 150 },
];

beforeAll(async () => {
  client = await newCassandraClient();
  await prepareKeyspace(client, keyspace);
  await seed(client, keyspace, vGlobal, history);
  await seed(client, keyspace, vEdges, history);
  for (const shape of [vPart, vPartOld]) {
    await seed(client, keyspace, shape, [
      ...history.map((w) => ({ ...w, partition: 1 })),
      { key: 'p0', value: { at: 0 }, ts: 10, partition: 0 },
      { key: 'p2', value: { at: 2 }, ts: 20, partition: 2 },
    ]);
  }
  await seed(client, keyspace, vMultiG, multiWriter);
  await seed(client, keyspace, vMultiP, multiWriter);
  await seed(client, keyspace, vShort, [
    { key: 'old-only', value: 'a', ts: 100 },
    { key: 'replaced', value: 'b', ts: 100 },
    { key: 'replaced', value: 'c', ts: 5000 },
  ]);
  const names = ['banana', 'apple', 'cherry', 'apricot', 'date', 'avocado', 'blueberry'];
  await seed(
    client,
    keyspace,
    kvGlobal,
    names.map((n) => ({ key: n, value: { n } })),
  );
  for (const shape of [kvPart, kvPartOld]) {
    await seed(
      client,
      keyspace,
      shape,
      names.map((n, i) => ({ key: n, value: { n }, partition: i % 3 })),
    );
  }
  await seed(client, keyspace, kvTuple, [
    { key: ['eu', 'fr', 1], value: 'a' },
    { key: ['eu', 'de', 2], value: 'b' },
    { key: ['us', 'ca', 3], value: 'c' },
    { key: ['eu', 'fr', 2], value: 'd' },
  ]);
  lookup = await openLookup({ client, keyspace, generationCacheMs: 300 });
});

afterAll(() =>
  cleanUp(
    () => lookup?.close(),
    () => Promise.all(extraClients.map((c) => c.shutdown().catch(() => undefined))),
    () => client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`),
    () => client?.shutdown(),
  ),
);

describe.each([
  ['global', vGlobal],
  ['global, edge layout', vEdges],
  ['partitioned', vPart],
  ['partitioned (unbucketed table from before buckets)', vPartOld],
])('versioned %s store', (_name, shape) => {
  it('get latest and as of (KIP-889 semantics, tombstones answer null)', async () => {
    const s = lookup.store<string, { v: unknown }>(shape.store);
    expect(await s.get('k1')).toEqual({ value: { v: 4 }, timestamp: 400 });
    expect(await s.get('k1', 150)).toEqual({ value: { v: 1 }, timestamp: 100, validTo: 200 });
    expect(await s.get('k1', 200)).toEqual({ value: { v: 2 }, timestamp: 200, validTo: 300 });
    expect(await s.get('k1', 299)).toEqual({ value: { v: 2 }, timestamp: 200, validTo: 300 });
    expect(await s.get('k1', 400)).toEqual({ value: { v: 4 }, timestamp: 400 });
    expect(await s.get('k1', 350)).toBeNull();
    expect(await s.get('k1', 99)).toBeNull();
    expect(await s.get('k1', 10_000)).toEqual({ value: { v: 4 }, timestamp: 400 });
    expect(await s.get('nope')).toBeNull();
    expect(await s.getValue('k2', 150)).toEqual({ v: 'only' });
    // A JavaScript caller's null options read as none (getValue answers without an async frame of its own).
    expect(await s.getValue('k2', 150, null as unknown as undefined)).toEqual({ v: 'only' });
    expect(await s.get('k2', 150, null as unknown as undefined)).toEqual(await s.get('k2', 150));
    // An as-of getValue (one read, no validTo) answers what get answers, on every side of every version and tombstone.
    for (const asOf of [0, 99, 100, 150, 199, 200, 299, 300, 350, 399, 400, 10_000]) {
      expect({ asOf, value: await s.getValue('k1', asOf) }).toEqual({ asOf, value: (await s.get('k1', asOf))?.value ?? null });
    }
    expect(await s.getValue('nope', 150)).toBeNull();
    // validTo: false answers get's version (value and timestamp) without its validTo.
    for (const asOf of [0, 99, 100, 150, 199, 200, 299, 300, 350, 399, 400, 10_000]) {
      const full = await s.get('k1', asOf);
      const expected = full === null ? null : { value: full.value, timestamp: full.timestamp };
      expect({ asOf, rec: await s.get('k1', asOf, { validTo: false }) }).toEqual({ asOf, rec: expected });
    }
  });

  it('history with bounds and order', async () => {
    const s = lookup.store<string, { v: unknown }>(shape.store);
    expect(await s.history('k1', { order: 'asc' })).toEqual([
      { value: { v: 1 }, timestamp: 100, validTo: 200 },
      { value: { v: 2 }, timestamp: 200, validTo: 300 },
      { value: { v: 4 }, timestamp: 400 },
    ]);
    // KIP-968: every version valid at some point in [fromTime, toTime].
    expect(await s.history('k1', { fromTime: 250, toTime: 450, order: 'desc' })).toEqual([
      { value: { v: 4 }, timestamp: 400 },
      { value: { v: 2 }, timestamp: 200, validTo: 300 },
    ]);
    expect(await s.history('k1', { fromTime: 300, toTime: 399 })).toEqual([]);
    // Without an order, newest first (Kafka's ResultOrder.ANY).
    expect((await s.history('k1')).map((r) => r.timestamp)).toEqual([400, 200, 100]);
    await expect(s.history('k1', { fromTime: 250, toTime: 150 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await s.get('k1', -1)).toBeNull();
    expect(await s.history('k1', { fromTime: 150, toTime: 250, order: 'asc' })).toEqual([
      { value: { v: 1 }, timestamp: 100, validTo: 200 },
      { value: { v: 2 }, timestamp: 200, validTo: 300 },
    ]);
    expect(await s.history('nope')).toEqual([]);
  });

  it('refuses kv-only operations with a typed error', async () => {
    await expect(collect(lookup.store(shape.store).all())).rejects.toMatchObject({ code: 'WRONG_STORE_KIND', stage: 'lookup' });
  });
});

it.each([
  ['bucketed', vPart],
  ['unbucketed', vPartOld],
])('partitioned versioned store (%s): finds keys in any partition, or reads one given partition', async (_layout, shape) => {
  const s = lookup.store<string, { at: number }>(shape.store);
  expect(await s.getValue('p0')).toEqual({ at: 0 });
  expect(await s.getValue('p2')).toEqual({ at: 2 });
  expect(await s.getValue('p2', undefined, { partition: 2 })).toEqual({ at: 2 });
  expect(await s.getValue('p2', undefined, { partition: 0 })).toBeNull();
  expect(await s.get('k1', 150)).toEqual({ value: { v: 1 }, timestamp: 100, validTo: 200 });
  expect(await s.get('k1', 150, { partition: 1 })).toEqual({ value: { v: 1 }, timestamp: 100, validTo: 200 });
});

it('history retention: older than streamTime - retention answers only with the latest version if it qualifies', async () => {
  const s = lookup.store<string, string>(vShort.store);
  // stream time 5000, retention 1000: horizon 4000.
  expect(await s.get('old-only', 200)).toEqual({ value: 'a', timestamp: 100 });
  expect(await s.get('replaced', 200)).toBeNull();
  expect(await s.get('replaced', 4500)).toEqual({ value: 'b', timestamp: 100, validTo: 5000 });
  expect(await s.get('replaced')).toEqual({ value: 'c', timestamp: 5000 });
  // 'b' stopped being valid at 5000 > horizon, so it is still in the history; nothing valid only before 4000 is.
  expect(await s.history('replaced', { order: 'asc' })).toEqual([
    { value: 'b', timestamp: 100, validTo: 5000 },
    { value: 'c', timestamp: 5000 },
  ]);
  expect(await s.history('old-only', { fromTime: 0, toTime: 200 })).toEqual([{ value: 'a', timestamp: 100 }]);
  // KIP-968 below the horizon (toTime < 4000): at most the newest version, as get(key, toTime) answers.
  expect(await s.history('replaced', { fromTime: 0, toTime: 3999 })).toEqual([]);
  expect(await s.history('replaced', { fromTime: 0, toTime: 4000 })).toEqual([{ value: 'b', timestamp: 100, validTo: 5000 }]);
  // getValue below the horizon needs the next version too: only the newest version may answer there.
  expect(await s.getValue('old-only', 200)).toBe('a');
  expect(await s.getValue('replaced', 200)).toBeNull();
  expect(await s.getValue('replaced', 4500)).toBe('b');
  expect(await s.getValue('replaced', 6000)).toBe('c');
});

it.each([
  ['global', vMultiG],
  ['partitioned', vMultiP],
])('%s store fed by several partitions: each version expires with the stream time of its own partition', async (_scope, shape) => {
  const s = lookup.store<string, string>(shape.store);
  // Partition 1's horizon is -900: nothing of 'slow' has expired, although partition 0 is 9,900 ms ahead.
  expect(await s.get('slow', 60)).toEqual({ value: 's1', timestamp: 50, validTo: 80 });
  expect(await s.get('slow', 99)).toEqual({ value: 's2', timestamp: 80, validTo: 100 });
  expect(await s.get('slow', 100)).toBeNull();
  expect(await s.history('slow', { fromTime: 0, toTime: 90, order: 'asc' })).toEqual([
    { value: 's1', timestamp: 50, validTo: 80 },
    { value: 's2', timestamp: 80, validTo: 100 },
  ]);
  // Partition 0's horizon is 9,000: 'fast' answers below it only with its latest version, if eligible.
  expect(await s.get('fast', 200)).toBeNull();
  expect(await s.get('fast', 9400)).toEqual({ value: 'f1', timestamp: 100, validTo: 9500 });
  expect(await s.get('fast', 9600)).toEqual({ value: 'f2', timestamp: 9500 });
  expect(await s.history('fast', { fromTime: 0, toTime: 8999 })).toEqual([]);
  expect(await s.history('fast', { order: 'asc' })).toEqual([
    { value: 'f1', timestamp: 100, validTo: 9500 },
    { value: 'f2', timestamp: 9500 },
  ]);
  expect(await s.get('ahead', 200)).toBeNull();
  // getValue applies the horizon of the writer of the version it finds, as get does.
  for (const [key, asOf] of [
    ['slow', 60],
    ['slow', 99],
    ['slow', 100],
    ['fast', 200],
    ['fast', 9400],
    ['fast', 9600],
    ['ahead', 200],
  ] as const) {
    expect({ key, asOf, value: await s.getValue(key, asOf) }).toEqual({ key, asOf, value: (await s.get(key, asOf))?.value ?? null });
  }
});

it('kv range, reverse range, prefix and all come in encoded-key order, across buckets and partitions', async () => {
  for (const shape of [kvGlobal, kvPart, kvPartOld]) {
    const s = lookup.store<string, { n: string }>(shape.store);
    const keys = async (it: AsyncIterable<{ key: string }>) => (await collect(it)).map((e) => e.key);
    expect(await keys(s.all())).toEqual(['apple', 'apricot', 'avocado', 'banana', 'blueberry', 'cherry', 'date']);
    expect(await keys(s.reverseAll())).toEqual(['date', 'cherry', 'blueberry', 'banana', 'avocado', 'apricot', 'apple']);
    expect(await keys(s.range('apricot', 'blueberry'))).toEqual(['apricot', 'avocado', 'banana', 'blueberry']);
    expect(await keys(s.range('b'))).toEqual(['banana', 'blueberry', 'cherry', 'date']);
    expect(await keys(s.range(undefined, 'apricot'))).toEqual(['apple', 'apricot']);
    expect(await keys(s.reverseRange('b', 'd'))).toEqual(['cherry', 'blueberry', 'banana']);
    expect(await keys(s.prefixScan('ap'))).toEqual(['apple', 'apricot']);
    expect(await keys(s.all({ limit: 3 }))).toEqual(['apple', 'apricot', 'avocado']);
    expect(await s.getValue('cherry')).toEqual({ n: 'cherry' });
    expect(await s.get('zzz')).toBeNull();
    await expect(s.get('apple', 5)).rejects.toMatchObject({ code: 'WRONG_STORE_KIND' });
    await expect(s.history('apple')).rejects.toMatchObject({ code: 'WRONG_STORE_KIND' });
    const p1 = await s.page({ limit: 3 });
    expect(p1.items.map((e) => e.key)).toEqual(['apple', 'apricot', 'avocado']);
    const p2 = await s.page({ limit: 3, after: p1.next });
    expect(p2.items.map((e) => e.key)).toEqual(['banana', 'blueberry', 'cherry']);
    const p3 = await s.page({ limit: 3, after: p2.next });
    expect(p3.items.map((e) => e.key)).toEqual(['date']);
    expect(p3.next).toBeUndefined();
  }
});

it('tuple keys: prefix scans match element-wise', async () => {
  const s = lookup.store<unknown[], string>(kvTuple.store);
  expect((await collect(s.prefixScan(['eu']))).map((e) => e.key)).toEqual([
    ['eu', 'de', 2],
    ['eu', 'fr', 1],
    ['eu', 'fr', 2],
  ]);
  expect((await collect(s.prefixScan(['eu', 'fr']))).map((e) => e.value)).toEqual(['a', 'd']);
  expect(await s.getValue(['us', 'ca', 3])).toBe('c');
});

it('unknown stores fail with UNKNOWN_STORE; stores() lists the catalog', async () => {
  await expect(lookup.store('missing').get('x')).rejects.toMatchObject({ code: 'UNKNOWN_STORE' });
  const stores = await lookup.stores();
  expect(stores.map((s) => s.name)).toEqual(expect.arrayContaining(['customers', 'kv-global', 'orders.by-id']));
  expect(stores.find((s) => s.name === 'customers')).toMatchObject({
    kind: 'versioned',
    scope: 'global',
    keySerde: 'string',
    valueSerde: 'json',
    generation: 1,
    table: 'customers_g1',
  });
});

it('pages through 10k keys with a small fetch size, in order, without holding the table', async () => {
  const n = 10_000;
  await seed(
    client,
    keyspace,
    kvBig,
    Array.from({ length: n }, (_, i) => ({ key: BigInt(i * 7 - 30_000), value: { i } })),
  );
  const small = await openLookup({ client: await extraClient(), keyspace, fetchSize: 97 });
  const counter = countExecutes(small.client);
  let count = 0;
  let prev: bigint | undefined;
  for await (const e of small.store<bigint, { i: number }>(kvBig.store).all()) {
    if (prev !== undefined) expect(e.key > prev).toBe(true);
    prev = e.key;
    count++;
  }
  expect(count).toBe(n);
  expect(counter.count()).toBeGreaterThanOrEqual(Math.floor(n / 97));
  // Numbers are accepted for int64 keys and coerced like the worker does.
  expect(await small.store(kvBig.store).getValue(-30_000 + 7 * 5)).toEqual({ i: 5 });
  const page = await small.store<bigint, unknown>(kvBig.store).page({ limit: 2, from: BigInt(0) });
  expect(page.items.map((e) => e.key)).toEqual([BigInt(2), BigInt(9)]);
  await small.close();
});

it('generation switch: reads move to the new generation after the cache interval, one call never mixes', async () => {
  const shape: StoreShape = { store: 'switching', kind: 'kv', scope: 'global' };
  await seed(
    client,
    keyspace,
    shape,
    Array.from({ length: 100 }, (_, i) => ({ key: `k${String(i).padStart(3, '0')}`, value: 'g1' })),
  );
  const vshape: StoreShape = { store: 'switching-v', kind: 'versioned', scope: 'global' };
  await seed(client, keyspace, vshape, [{ key: 'a', value: 'g1', ts: 1 }]);
  const l = await openLookup({ client, keyspace, generationCacheMs: 300, fetchSize: 10 });
  expect(await l.store(vshape.store).getValue('a')).toBe('g1');

  const it = l.store<string, string>(shape.store).all()[Symbol.asyncIterator]();
  const seen: string[] = [];
  for (let i = 0; i < 20; i++) seen.push((await it.next()).value.value);
  await switchGeneration(
    client,
    keyspace,
    shape,
    Array.from({ length: 50 }, (_, i) => ({ key: `k${String(i).padStart(3, '0')}`, value: 'g2' })),
  );
  await switchGeneration(client, keyspace, vshape, [{ key: 'a', value: 'g2', ts: 1 }]);
  await new Promise((r) => setTimeout(r, 400));
  for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value.value);
  expect(seen).toHaveLength(100);
  expect(new Set(seen)).toEqual(new Set(['g1']));

  expect(await l.store(vshape.store).getValue('a')).toBe('g2');
  const after = await collect(l.store<string, string>(shape.store).all());
  expect(after).toHaveLength(50);
  expect(new Set(after.map((e) => e.value))).toEqual(new Set(['g2']));
  expect((await l.store(shape.store).info()).generation).toBe(2);
  await l.close();
});

it('a cached generation whose table a rebuild dropped: gets, history and scans read the catalog again and answer from the new one', async () => {
  const shapes: StoreShape[] = [
    { store: 'dropped-v', kind: 'versioned', scope: 'global', historyRetentionMs: 1_000_000 },
    { store: 'dropped-e', kind: 'versioned', scope: 'global', historyRetentionMs: 1_000_000, edges: true },
    { store: 'dropped-kv', kind: 'kv', scope: 'global' },
  ];
  const versioned = (s: StoreShape) => s.kind === 'versioned';
  for (const s of shapes) await seed(client, keyspace, s, [{ key: 'a', value: 'g1', ts: versioned(s) ? 10 : undefined }]);
  // A cache longer than the test: without a new catalog read, every call would name generation 1.
  const l = await openLookup({ client, keyspace, generationCacheMs: 600_000 });
  const pinned = await l.store(shapes[0].store).pinned();
  for (const s of shapes) expect(await l.store(s.store).getValue('a')).toBe('g1');
  // Two more lookups whose first read after the drop is a scan (all) and a page of the kv store.
  const [scans, pages] = [
    await openLookup({ client, keyspace, generationCacheMs: 600_000 }),
    await openLookup({ client, keyspace, generationCacheMs: 600_000 }),
  ];
  const kvStore = shapes[2].store;
  for (const x of [scans, pages]) expect(await x.store(kvStore).getValue('a')).toBe('g1');
  const catalog = new StoreCatalog(client, keyspace);
  for (const s of shapes) {
    await switchGeneration(client, keyspace, s, [{ key: 'a', value: 'g2', ts: versioned(s) ? 20 : undefined }]);
    const entry = (await catalog.get(s.store))!;
    await client.execute(`DROP TABLE ${keyspace}.${generationTable(entry.baseTable, 1)}`);
  }
  // Scans move to the current generation too, before their first entry.
  expect((await collect(scans.store<string, string>(kvStore).all())).map((e) => e.value)).toEqual(['g2']);
  expect(await pages.store<string, string>(kvStore).page({ limit: 10 })).toMatchObject({
    items: [{ key: 'a', value: 'g2' }],
    generation: 2,
  });
  for (const s of shapes) {
    expect(await l.store(s.store).getValue('a')).toBe('g2');
    expect((await l.store(s.store).info()).generation).toBe(2);
  }
  for (const s of shapes.filter(versioned)) {
    expect(await l.store(s.store).get('a', 25)).toMatchObject({ value: 'g2', timestamp: 20 });
    expect((await l.store(s.store).history('a')).map((r) => r.value)).toEqual(['g2']);
  }
  // A pinned accessor reads its own generation only: it reports the missing table instead of moving on.
  const gone = await pinned.getValue('a').then(
    () => null,
    (e: unknown) => e,
  );
  expect(gone).toMatchObject({
    code: 'TABLE_MISSING',
    retriable: true,
    context: { store: shapes[0].store, table: expect.stringMatching(/_g1$/) },
  });
  expect((gone as Error).message).toMatch(/dropped .* or not created yet/);
  await Promise.all([l.close(), scans.close(), pages.close()]);
});

it('a scan past its first entry whose table a rebuild dropped fails with TABLE_MISSING: it never goes on in another generation', async () => {
  const shape: StoreShape = { store: 'dropped-mid-scan', kind: 'kv', scope: 'global' };
  const keys = Array.from({ length: 1000 }, (_, i) => `k${String(i).padStart(4, '0')}`);
  const rows = (value: string) => keys.map((key) => ({ key, value }));
  await seed(client, keyspace, shape, rows('g1'));
  const l = await openLookup({ client, keyspace, generationCacheMs: 600_000, fetchSize: 10 });
  const it = l.store<string, string>(shape.store).all()[Symbol.asyncIterator]();
  const seen: string[] = [];
  for (let i = 0; i < 5; i++) seen.push((await it.next()).value.key);
  await switchGeneration(client, keyspace, shape, rows('g2'));
  const entry = (await new StoreCatalog(client, keyspace).get(shape.store))!;
  await client.execute(`DROP TABLE ${keyspace}.${generationTable(entry.baseTable, 1)}`);
  // The first page of each bucket is already read (at most 10 keys each); a later page meets the dropped table.
  const failed = await (async () => {
    try {
      for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value.key);
      return null;
    } catch (e) {
      return e;
    }
  })();
  expect(failed).toMatchObject({ code: 'TABLE_MISSING', context: { store: shape.store, table: expect.stringMatching(/_g1$/) } });
  expect(seen).toEqual(keys.slice(0, seen.length));
  expect(seen.length).toBeLessThan(keys.length);
  // A new scan reads the catalog again and answers from the new generation.
  const l2 = await openLookup({ client, keyspace });
  expect(new Set((await collect(l2.store<string, string>(shape.store).all())).map((e) => e.value))).toEqual(new Set(['g2']));
  await Promise.all([l.close(), l2.close()]);
});

it('read cache: latest-value gets are served from the LRU and purged on generation change', async () => {
  const shape: StoreShape = { store: 'cached', kind: 'versioned', scope: 'global' };
  await seed(client, keyspace, shape, [{ key: 'a', value: 'g1', ts: 1 }]);
  const c = await extraClient();
  const l = await openLookup({ client: c, keyspace, generationCacheMs: 200, cache: { maxEntries: 100, ttlMs: 60_000 } });
  const counter = countExecutes(c);
  expect(await l.store(shape.store).getValue('a')).toBe('g1');
  counter.reset();
  expect(await l.store(shape.store).getValue('a')).toBe('g1');
  expect(counter.count()).toBe(0);
  await switchGeneration(client, keyspace, shape, [{ key: 'a', value: 'g2', ts: 1 }]);
  await new Promise((r) => setTimeout(r, 300));
  expect(await l.store(shape.store).getValue('a')).toBe('g2');
  await l.close();
});

describe('waitUntilReady', () => {
  it('resolves when the status row of the current generation turns READY (by pipeline or by store)', async () => {
    const status = new PipelineStatusTable(client, keyspace);
    const row = {
      pipeline: 'customers-pipe',
      generation: 1,
      store: 'customers',
      recordsDone: 1,
      recordsTotal: 10,
      endOffsets: {},
      startOffsets: {},
      progress: {},
      lastError: null,
      worker: 'w',
    };
    await status.put({ ...row, state: 'BOOTSTRAPPING' });
    const t0 = Date.now();
    setTimeout(() => void status.put({ ...row, state: 'READY', recordsDone: 10 }), 700);
    const [byPipeline, byStore] = await Promise.all([
      lookup.waitUntilReady('customers-pipe', { timeoutMs: 20_000, pollMs: 100 }),
      lookup.waitUntilReady('customers', { timeoutMs: 20_000, pollMs: 100 }),
    ]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(600);
    expect(byPipeline).toEqual([expect.objectContaining({ pipeline: 'customers-pipe', state: 'READY', generation: 1 })]);
    expect(byStore).toEqual(byPipeline);
    const r = await lookup.readiness();
    expect(r.pipelines.find((p) => p.pipeline === 'customers-pipe')?.state).toBe('READY');
  });

  it('times out with a typed, retriable error', async () => {
    const status = new PipelineStatusTable(client, keyspace);
    await status.put({
      pipeline: 'slow-pipe',
      generation: 1,
      store: 'kv-global',
      state: 'BOOTSTRAPPING',
      recordsDone: 1,
      recordsTotal: 10,
      endOffsets: {},
      startOffsets: {},
      progress: {},
      lastError: null,
      worker: 'w',
    });
    const err = await lookup.waitUntilReady('slow-pipe', { timeoutMs: 500, pollMs: 100 }).catch((e) => e);
    expect(err).toBeInstanceOf(ReadyTimeoutError);
    expect(err).toBeInstanceOf(AdjunctError);
    expect(err).toMatchObject({ code: 'READY_TIMEOUT', retriable: true, stage: 'lookup' });
    expect(err.message).toContain('BOOTSTRAPPING@g1');
    await expect(lookup.waitUntilReady('no-such-thing', { timeoutMs: 200 })).rejects.toBeInstanceOf(ReadyTimeoutError);
    const r = await lookup.readiness(['never-started', 'slow-pipe']);
    expect(r.ready).toBe(false);
    expect(r.notReady).toEqual(['never-started', 'slow-pipe']);
    expect(r.pipelines.find((p) => p.pipeline === 'never-started')?.state).toBe('MISSING');
    expect((await lookup.readiness()).notReady).toContain('slow-pipe');
  });
});

describe('request counts', () => {
  const report: Record<string, number> = {};
  afterAll(() => process.stderr.write(`lookup requests per call: ${JSON.stringify(report)}\n`));

  it('a point get is one Cassandra request and an as-of get two parallel ones once the catalog entry is cached', async () => {
    const c = await extraClient();
    const l = await openLookup({ client: c, keyspace, generationCacheMs: 60_000 });
    const counter = countExecutes(c);
    const measure = async (name: string, fn: () => Promise<unknown>) => {
      counter.reset();
      await fn();
      report[name] = counter.count();
      return counter.count();
    };
    const vg = l.store(vGlobal.store);
    const vp = l.store(vPart.store);
    const kg = l.store(kvGlobal.store);
    const kp = l.store(kvPart.store);
    // A versioned global store's table layout is read once per generation table (system_schema), then cached.
    expect(await measure('versioned get (cold: catalog + layout + read)', () => vg.get('k1'))).toBe(3);
    // An as-of get reads the version and the next one (for validTo) in parallel; a cold stream-time cache adds a
    // third request issued alongside them, not a round trip.
    expect(await measure('versioned as-of get (cold stream time)', () => vg.get('k1', 150))).toBe(3);
    expect(await measure('versioned get', () => vg.get('k1'))).toBe(1);
    expect(await measure('versioned as-of get', () => vg.get('k1', 150))).toBe(2);
    // Without validTo, an as-of value is one read; below the key's horizon the next version is read after it.
    expect(await measure('versioned as-of getValue', () => vg.getValue('k1', 150))).toBe(1);
    expect(await measure('versioned as-of get without validTo', () => vg.get('k1', 150, { validTo: false }))).toBe(1);
    const vs = l.store(vShort.store);
    await vs.get('replaced', 200);
    expect(await measure('versioned as-of getValue below the horizon', () => vs.getValue('replaced', 200))).toBe(2);
    expect(await measure('versioned as-of getValue above the horizon', () => vs.getValue('replaced', 4500))).toBe(1);
    await vp.get('k1', 150);
    expect(await measure('partitioned versioned get', () => vp.get('k1'))).toBe(1);
    expect(await measure('partitioned versioned as-of get', () => vp.get('k1', 150))).toBe(2);
    // A table from before buckets costs the same: its layout is read once per table (system_schema), then cached.
    const vo = l.store(vPartOld.store);
    await vo.get('k1', 150);
    expect(await measure('unbucketed partitioned versioned get', () => vo.get('k1'))).toBe(1);
    expect(await measure('unbucketed partitioned versioned as-of get', () => vo.get('k1', 150))).toBe(2);
    await kg.get('apple');
    await kp.get('apple');
    expect(await measure('kv get (global)', () => kg.get('apple'))).toBe(1);
    expect(await measure('kv get (partitioned)', () => kp.get('apple'))).toBe(1);
    expect(await measure('versioned history (global, unbounded)', () => vg.history('k1'))).toBe(1);
    // The edge layout answers an as-of get with its validTo in one read.
    const ve = l.store(vEdges.store);
    await ve.get('k1', 150);
    expect(await measure('edge layout: versioned get', () => ve.get('k1'))).toBe(1);
    expect(await measure('edge layout: versioned as-of get', () => ve.get('k1', 150))).toBe(1);
    expect(await measure('edge layout: versioned as-of getValue', () => ve.getValue('k1', 150))).toBe(1);
    expect(await measure('edge layout: versioned history (unbounded)', () => ve.history('k1'))).toBe(1);
    await l.close();
  });
});
