import { Writable } from 'stream';
import { Client } from 'cassandra-driver';
import type { FastifyInstance } from 'fastify';
import { PipelineStatusTable } from '../../../src/catalog';
import { AdjunctError } from '../../../src/errors';
import { buildHttpServer, httpStarter, HttpWorker } from '../../../src/http/server';
import { Lookup, openLookup } from '../../../src/lookup';
import { createLogger, silentLogger } from '../../../src/observability/logger';
import { AdjunctMetrics } from '../../../src/observability/metrics';
import { cleanUp, newCassandraClient, uniqueName } from '../helpers';
import { prepareKeyspace, seed } from '../lookup/fixtures';

jest.setTimeout(120_000);

// light-my-request (behind fastify.inject) requires `cookie` 2.x, which is ESM-only: Node >= 20.19 loads it, Jest's
// CommonJS loader cannot. No route here sets cookies, so a stub of the one function it imports is enough.

const keyspace = uniqueName('it_http');
const TOKEN = 'x'.repeat(8) + 'secret-token-123';
let client: Client;
let lookup: Lookup;

/** A stand-in for the few Worker methods the server uses. */
class FakeWorker implements HttpWorker {
  ready = false;
  readonly calls: string[] = [];
  readonly metrics = new AdjunctMetrics({ defaultMetrics: false });
  status() {
    return {
      workerId: 'fake',
      state: 'RUNNING',
      pipelines: [{ name: 'boot', bootstrap: { state: this.ready ? 'READY' : 'BOOTSTRAPPING', done: 5, total: 10 } }, { name: 'plain' }],
    };
  }
  isReady() {
    return this.ready;
  }
  runner(name: string) {
    if (name !== 'boot' && name !== 'plain')
      throw new AdjunctError(`unknown pipeline ${name}`, { code: 'UNKNOWN_PIPELINE', stage: 'config' });
    const calls = this.calls;
    return {
      state: 'RUNNING',
      pause: async () => void calls.push(`pause:${name}`),
      resume: async () => void calls.push(`resume:${name}`),
      reload: async () => (calls.push(`reload:${name}`), 2),
      rollback: async (to: number) => {
        if (name === 'plain')
          throw new AdjunctError('store plain has no previous generation to roll back to', {
            code: 'NO_PREVIOUS_GENERATION',
            stage: 'store',
          });
        calls.push(`rollback:${name}:${to}`);
        return { current: to, previous: 2, changed: true };
      },
    };
  }
}

const worker = new FakeWorker();
let app: FastifyInstance;
let serveApp: FastifyInstance;

beforeAll(async () => {
  client = await newCassandraClient();
  await prepareKeyspace(client, keyspace);
  await seed(client, keyspace, { store: 'customers', kind: 'versioned', scope: 'global' }, [
    { key: 'c1', value: { name: 'Ada' }, ts: 100 },
    { key: 'c1', value: { name: 'Ada L.' }, ts: 200 },
    { key: 'a/b c', value: { name: 'slashy' }, ts: 100 },
  ]);
  await seed(client, keyspace, { store: 'by-id', kind: 'versioned', scope: 'partitioned', keySerde: 'int64' }, [
    { key: BigInt(42), value: { n: 42 }, ts: 5, partition: 1 },
    { key: BigInt(-7), value: { n: -7 }, ts: 5, partition: 0 },
  ]);
  await seed(
    client,
    keyspace,
    { store: 'fruits', kind: 'kv', scope: 'global' },
    ['apple', 'apricot', 'banana', 'cherry', 'date'].map((k) => ({ key: k, value: { k } })),
  );
  await seed(client, keyspace, { store: 'geo', kind: 'kv', scope: 'global', keySerde: 'tuple', valueSerde: 'buffer' }, [
    { key: ['eu', 'fr'], value: Buffer.from('paris') },
    { key: ['eu', 'de'], value: Buffer.from('berlin') },
    { key: ['us', 'ny'], value: Buffer.from('nyc') },
  ]);
  await seed(client, keyspace, { store: 'docs', kind: 'kv', scope: 'global', keySerde: 'json' }, [{ key: { id: 1 }, value: { ok: true } }]);
  lookup = await openLookup({ client, keyspace, generationCacheMs: 200 });
  app = await buildHttpServer({ worker, lookup, config: { host: '127.0.0.1', port: 0 }, logger: silentLogger });
  serveApp = await buildHttpServer({
    lookup,
    config: { host: '127.0.0.1', port: 0 },
    logger: silentLogger,
    expectedPipelines: ['serve-boot'],
  });
});

afterAll(() =>
  cleanUp(
    () => app?.close(),
    () => serveApp?.close(),
    () => lookup?.close(),
    () => client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`),
    () => client?.shutdown(),
  ),
);

const get = (url: string, a = app) => a.inject({ method: 'GET', url });

describe('store reads', () => {
  it('GET /stores and /stores/:store', async () => {
    const r = await get('/stores');
    expect(r.statusCode).toBe(200);
    expect(r.json().stores.map((s: { name: string }) => s.name)).toEqual(['by-id', 'customers', 'docs', 'fruits', 'geo']);
    expect((await get('/stores/fruits')).json()).toMatchObject({ name: 'fruits', kind: 'kv', generation: 1 });
    expect((await get('/stores/nope')).statusCode).toBe(404);
  });

  it('GET a key: latest, as of, decoded per key serde, 404s', async () => {
    expect((await get('/stores/customers/keys/c1')).json()).toEqual({
      store: 'customers',
      key: 'c1',
      value: { name: 'Ada L.' },
      timestamp: 200,
      generation: 1,
    });
    expect((await get('/stores/customers/keys/c1?asOf=150')).json()).toEqual({
      store: 'customers',
      key: 'c1',
      value: { name: 'Ada' },
      timestamp: 100,
      validTo: 200,
      generation: 1,
    });
    // validTo=false: the same version without its validTo (one read instead of two).
    expect((await get('/stores/customers/keys/c1?asOf=150&validTo=false')).json()).toEqual({
      store: 'customers',
      key: 'c1',
      value: { name: 'Ada' },
      timestamp: 100,
      generation: 1,
    });
    expect((await get('/stores/customers/keys/c1?asOf=150&validTo=true')).json()).toMatchObject({ timestamp: 100, validTo: 200 });
    expect((await get('/stores/customers/keys/c1?asOf=50&validTo=false')).statusCode).toBe(404);
    expect((await get('/stores/customers/keys/c1?asOf=200')).json()).toEqual({
      store: 'customers',
      key: 'c1',
      value: { name: 'Ada L.' },
      timestamp: 200,
      generation: 1,
    });
    expect((await get(`/stores/customers/keys/${encodeURIComponent('a/b c')}`)).json()).toMatchObject({
      key: 'a/b c',
      value: { name: 'slashy' },
    });
    expect((await get('/stores/by-id/keys/42')).json()).toMatchObject({ key: '42', value: { n: 42 } });
    expect((await get('/stores/by-id/keys/-7?asOf=5')).json()).toMatchObject({ value: { n: -7 }, timestamp: 5 });
    expect((await get(`/stores/geo/keys/${encodeURIComponent('["eu","fr"]')}`)).json()).toMatchObject({
      key: ['eu', 'fr'],
      value: Buffer.from('paris').toString('base64'),
    });
    expect((await get(`/stores/docs/keys/${encodeURIComponent('{"id":1}')}`)).json()).toMatchObject({
      key: { id: 1 },
      value: { ok: true },
    });
    const long = await get(`/stores/customers/keys/${'k'.repeat(600)}`);
    expect(long.json()).toMatchObject({ error: 'NOT_FOUND', message: expect.stringContaining('not found in store') });
    const missing = await get('/stores/customers/keys/zz');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'NOT_FOUND' });
    expect((await get('/stores/customers/keys/c1?asOf=50')).statusCode).toBe(404);
    const unknown = await get('/stores/nope/keys/c1');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'UNKNOWN_STORE' });
  });

  it('bad parameters are 400 with a message', async () => {
    for (const url of [
      '/stores/customers/keys/c1?asOf=abc',
      '/stores/customers/keys/c1?asOf=-1.5',
      '/stores/by-id/keys/forty-two',
      `/stores/geo/keys/${encodeURIComponent('[eu')}`,
      '/stores/customers/keys/c1/history?order=sideways',
      '/stores/fruits/range?limit=0',
      '/stores/fruits/range?limit=100000',
      '/stores/fruits/range?cursor=%21%21',
      '/stores/customers/range',
      '/stores/fruits/keys/apple?asOf=5',
      '/stores/customers/keys/c1?asOf=150&validTo=maybe',
      '/stores/fruits/keys/apple/history',
    ]) {
      const r = await get(url);
      expect({ url, status: r.statusCode }).toEqual({ url, status: 400 });
      expect(typeof r.json().message).toBe('string');
      expect(r.json().message.length).toBeGreaterThan(0);
    }
  });

  it('a negative asOf is a valid time before every version (Kafka takes any long): 404, not 400', async () => {
    const r = await get('/stores/customers/keys/c1?asOf=-1');
    expect({ status: r.statusCode, error: r.json().error }).toEqual({ status: 404, error: 'NOT_FOUND' });
  });

  it('GET history with from/to/order', async () => {
    const r = await get('/stores/customers/keys/c1/history?order=asc');
    expect(r.json()).toEqual({
      store: 'customers',
      key: 'c1',
      generation: 1,
      versions: [
        { value: { name: 'Ada' }, timestamp: 100, validTo: 200 },
        { value: { name: 'Ada L.' }, timestamp: 200 },
      ],
    });
    expect((await get('/stores/customers/keys/c1/history?from=150&to=160&order=desc')).json().versions).toEqual([
      { value: { name: 'Ada' }, timestamp: 100, validTo: 200 },
    ]);
    expect(
      (await get('/stores/customers/keys/c1/history?order=desc')).json().versions.map((v: { timestamp: number }) => v.timestamp),
    ).toEqual([200, 100]);
    // Without an order: newest first, as Kafka Streams answers ResultOrder.ANY; from after to is a 400.
    expect((await get('/stores/customers/keys/c1/history')).json().versions.map((v: { timestamp: number }) => v.timestamp)).toEqual([
      200, 100,
    ]);
    expect((await get('/stores/customers/keys/c1/history?from=160&to=150')).statusCode).toBe(400);
    expect((await get('/stores/nope/keys/c1/history')).statusCode).toBe(404);
  });

  it('GET range pages with an opaque cursor; prefix scans', async () => {
    const keys: string[] = [];
    let url = '/stores/fruits/range?limit=2';
    for (let i = 0; i < 10; i++) {
      const body = (await get(url)).json();
      keys.push(...body.items.map((e: { key: string }) => e.key));
      if (!body.nextCursor) break;
      expect(body.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      url = `/stores/fruits/range?limit=2&cursor=${body.nextCursor}`;
    }
    expect(keys).toEqual(['apple', 'apricot', 'banana', 'cherry', 'date']);
    expect((await get('/stores/fruits/range?from=b&to=c')).json().items).toEqual([{ key: 'banana', value: { k: 'banana' } }]);
    expect((await get('/stores/fruits/prefix/ap')).json().items.map((e: { key: string }) => e.key)).toEqual(['apple', 'apricot']);
    const geo = (await get(`/stores/geo/prefix/${encodeURIComponent('["eu"]')}?limit=1`)).json();
    expect(geo.items).toEqual([{ key: ['eu', 'de'], value: Buffer.from('berlin').toString('base64') }]);
    const geo2 = (await get(`/stores/geo/prefix/${encodeURIComponent('["eu"]')}?limit=1&cursor=${geo.nextCursor}`)).json();
    expect(geo2.items.map((e: { key: string[] }) => e.key)).toEqual([['eu', 'fr']]);
    expect(geo2.nextCursor).toBeUndefined();
    expect((await get('/stores/nope/range')).statusCode).toBe(404);
  });
});

describe('ops routes', () => {
  it('healthz, readyz (worker), status, metrics', async () => {
    expect((await get('/healthz')).statusCode).toBe(200);
    worker.ready = false;
    const nr = await get('/readyz');
    expect(nr.statusCode).toBe(503);
    expect(nr.json()).toMatchObject({ ready: false, notReady: ['boot'] });
    worker.ready = true;
    expect((await get('/readyz')).statusCode).toBe(200);
    expect((await get('/status')).json()).toMatchObject({ workerId: 'fake', pipelines: [{ name: 'boot' }, { name: 'plain' }] });
    worker.metrics.consumed.inc({ pipeline: 'boot' }, 3);
    const m = await get('/metrics');
    expect(m.statusCode).toBe(200);
    expect(m.headers['content-type']).toContain('text/plain');
    expect(m.body).toContain('adjunct_records_consumed_total{pipeline="boot"} 3');
    expect((await get('/nope')).statusCode).toBe(404);
  });

  it('serve mode: readyz follows the status table of the current generation', async () => {
    const status = new PipelineStatusTable(client, keyspace);
    const row = {
      pipeline: 'serve-boot',
      generation: 1,
      store: 'fruits',
      recordsDone: 1,
      recordsTotal: 2,
      endOffsets: {},
      startOffsets: {},
      progress: {},
      lastError: null,
      worker: 'w',
    };
    expect((await get('/readyz', serveApp)).json()).toMatchObject({
      ready: false,
      notReady: ['serve-boot'],
      pipelines: [{ state: 'MISSING' }],
    });
    await status.put({ ...row, state: 'BOOTSTRAPPING' });
    const r = await get('/readyz', serveApp);
    expect(r.statusCode).toBe(503);
    expect(r.json()).toMatchObject({
      ready: false,
      notReady: ['serve-boot'],
      pipelines: [{ pipeline: 'serve-boot', state: 'BOOTSTRAPPING', recordsDone: 1, recordsTotal: 2 }],
    });
    await status.put({ ...row, state: 'READY', recordsDone: 2 });
    expect((await get('/readyz', serveApp)).statusCode).toBe(200);
    const st = (await get('/status', serveApp)).json();
    expect(st).toMatchObject({ mode: 'serve', readiness: { ready: true } });
    expect(st.stores).toHaveLength(5);
    // versioned stores list each writer's persisted stream time and horizon (seeded with the default 1-day retention)
    expect(st.horizons.customers).toEqual([{ writer: 't:0', streamTime: 200, horizon: 200 - 86_400_000 }]);
    expect((await get('/metrics', serveApp)).statusCode).toBe(200);
    expect((await get('/stores/fruits/keys/apple', serveApp)).json()).toMatchObject({ value: { k: 'apple' } });
  });
});

describe('admin routes', () => {
  const post = (url: string, a = app, headers: Record<string, string> = {}, payload?: object) =>
    a.inject({ method: 'POST', url, headers, payload });

  it('loopback without a token: actions reach the runner; errors map to 404/409', async () => {
    expect((await post('/pipelines/boot/pause')).json()).toEqual({ pipeline: 'boot', action: 'pause', state: 'RUNNING' });
    expect((await post('/pipelines/boot/resume')).statusCode).toBe(200);
    const rl = await post('/pipelines/boot/reload');
    expect(rl.statusCode).toBe(202);
    expect(rl.json()).toEqual({ pipeline: 'boot', action: 'reload', building: 2 });
    expect((await post('/pipelines/boot/rollback')).statusCode).toBe(400); // the target generation is required
    expect((await post('/pipelines/boot/rollback', app, {}, { to: 1 })).json()).toEqual({
      pipeline: 'boot',
      action: 'rollback',
      current: 1,
      previous: 2,
      changed: true,
    });
    expect(worker.calls).toEqual(['pause:boot', 'resume:boot', 'reload:boot', 'rollback:boot:1']);
    expect((await post('/pipelines/ghost/pause')).statusCode).toBe(404);
    const conflict = await post('/pipelines/plain/rollback', app, {}, { to: 1 });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({ error: 'NO_PREVIOUS_GENERATION' });
    expect((await post('/pipelines/boot/explode')).statusCode).toBe(404);
    expect((await post('/pipelines/boot/pause', serveApp)).statusCode).toBe(503);
  });

  it('a configured token is enforced (also on loopback) and never logged', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) });
    const secured = await buildHttpServer({
      worker,
      lookup,
      config: { host: '127.0.0.1', port: 0, adminToken: TOKEN },
      logger: createLogger('trace', sink),
    });
    expect((await post('/pipelines/boot/pause', secured)).statusCode).toBe(401);
    expect((await post('/pipelines/boot/pause', secured, { authorization: 'Bearer wrong-token-wrong-token' })).statusCode).toBe(401);
    expect((await post('/pipelines/boot/pause', secured, { authorization: TOKEN })).statusCode).toBe(401);
    expect((await post('/pipelines/boot/pause', secured, { authorization: `Bearer ${TOKEN}` })).statusCode).toBe(200);
    expect((await get('/stores/fruits/keys/apple', secured)).statusCode).toBe(200);
    await secured.close();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(TOKEN);
  });

  it('bound to 0.0.0.0 without a token: admin routes off (403, logged at startup), reads served; with a token it is required', async () => {
    const lines: string[] = [];
    const off = await buildHttpServer({
      worker,
      lookup,
      config: { host: '0.0.0.0', port: 0 },
      logger: createLogger('info', { write: (l: string) => lines.push(l) }),
    });
    expect(lines.map((l) => JSON.parse(l).msg)).toContainEqual(expect.stringContaining('admin routes are off'));
    expect((await post('/pipelines/boot/pause', off)).statusCode).toBe(403);
    expect((await post('/pipelines/boot/pause', off, { authorization: `Bearer ${TOKEN}` })).statusCode).toBe(403);
    expect((await get('/stores/fruits/keys/apple', off)).statusCode).toBe(200);
    await off.close();
    await expect(
      buildHttpServer({ worker, lookup, config: { host: '0.0.0.0', port: 0, adminToken: 'short' }, logger: silentLogger }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    const open = await buildHttpServer({ worker, lookup, config: { host: '0.0.0.0', port: 0, adminToken: TOKEN }, logger: silentLogger });
    expect((await post('/pipelines/boot/pause', open)).statusCode).toBe(401);
    expect((await post('/pipelines/boot/pause', open, { authorization: `Bearer ${TOKEN}` })).statusCode).toBe(200);
    await open.close();
  });
});

it('httpStarter listens next to a worker and closes cleanly', async () => {
  const fake = Object.assign(new FakeWorker(), {
    config: { worker: { http: { enabled: true, host: '127.0.0.1', port: 0 } }, cassandra: { keyspace, readConsistency: 'localQuorum' } },
    cassandraClient: client,
    logger: silentLogger,
    state: 'RUNNING',
  });
  const started = await httpStarter(fake as never);
  expect(started).toBeDefined();
  const res = await fetch(`${started!.address}/stores/fruits/keys/banana`);
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ value: { k: 'banana' } });
  await started!.close();

  // Started before the worker (as `adjunct run` does): reads are 503 until attach() after the worker's start.
  const early = Object.assign(new FakeWorker(), { ...fake, state: 'STARTING', cassandraClient: undefined });
  const beforeStart = await httpStarter(early as never);
  try {
    const waiting = await fetch(`${beforeStart!.address}/stores/fruits/keys/banana`);
    expect(waiting.status).toBe(503);
    expect(await waiting.json()).toMatchObject({ error: 'WORKER_NOT_STARTED' });
    expect((await fetch(`${beforeStart!.address}/healthz`)).status).toBe(200);
    await expect(beforeStart!.attach()).rejects.toMatchObject({ code: 'WORKER_NOT_STARTED' });
    Object.assign(early, { state: 'RUNNING', cassandraClient: client });
    await beforeStart!.attach();
    await beforeStart!.attach(); // idempotent
    expect((await fetch(`${beforeStart!.address}/stores/fruits/keys/banana`)).status).toBe(200);
  } finally {
    await beforeStart!.close();
  }
  const disabled = await httpStarter(
    Object.assign({}, fake, { config: { ...fake.config, worker: { http: { enabled: false, host: '127.0.0.1', port: 0 } } } }) as never,
  );
  expect(disabled).toBeUndefined();
});
