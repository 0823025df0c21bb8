import { AdjunctError, ConfigError, InvalidArgumentError, StoreError } from '../../src/errors';
import { Registry } from 'prom-client';
import { adminRoutesEnabled, bearerMatches, isLoopbackHost } from '../../src/http/auth';
import { buildHttpServer, checkHttpSettings } from '../../src/http/build-server';
import { errorBody, statusOf } from '../../src/http/error-reply';
import { Lookup, LookupError } from '../../src/lookup';
import { createLogger } from '../../src/observability/logger';

describe('auth', () => {
  it('recognises loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h)).toBe(false);
  });

  it('matches bearer tokens exactly', () => {
    expect(bearerMatches('Bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('Bearer abcd', 'abc')).toBe(false);
    expect(bearerMatches('abc', 'abc')).toBe(false);
    expect(bearerMatches(undefined, 'abc')).toBe(false);
  });

  it('accepts a non-loopback bind without a token (admin routes off) and refuses a short token', () => {
    expect(() => checkHttpSettings({ host: '0.0.0.0', port: 1 })).not.toThrow();
    expect(() => checkHttpSettings({ host: '0.0.0.0', port: 1, adminToken: 'a'.repeat(15) })).toThrow(ConfigError);
    expect(() => checkHttpSettings({ host: '0.0.0.0', port: 1, adminToken: 'a'.repeat(16) })).not.toThrow();
    expect(() => checkHttpSettings({ host: '127.0.0.1', port: 1 })).not.toThrow();
  });

  it('serves admin routes only behind a token or on loopback', () => {
    expect(adminRoutesEnabled({ host: '0.0.0.0' })).toBe(false);
    expect(adminRoutesEnabled({ host: '0.0.0.0', adminToken: '' })).toBe(false);
    expect(adminRoutesEnabled({ host: '10.0.0.1', adminToken: 'a'.repeat(16) })).toBe(true);
    expect(adminRoutesEnabled({ host: '127.0.0.1' })).toBe(true);
    expect(adminRoutesEnabled({ host: '::1' })).toBe(true);
  });

  it('starts bound beyond loopback without a token, logs that admin routes are off and answers them 403', async () => {
    const lines: string[] = [];
    const admin = { pause: jest.fn(), resume: jest.fn(), reload: jest.fn(), rollback: jest.fn(), state: 'RUNNING' };
    const worker = {
      status: () => ({ state: 'RUNNING', pipelines: [] }),
      isReady: () => true,
      runner: () => admin,
      metrics: { registry: new Registry() },
    };
    const app = await buildHttpServer({
      worker,
      lookup: {} as Lookup,
      config: { host: '0.0.0.0', port: 0 },
      logger: createLogger('info', { write: (l: string) => lines.push(l) }),
    });
    try {
      const off = lines.map((l) => JSON.parse(l) as { msg: string; host?: string }).find((l) => l.msg.startsWith('admin routes are off'));
      expect(off).toMatchObject({ host: '0.0.0.0' });
      const res = await app.inject({ method: 'POST', url: '/pipelines/rates/pause' });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'ADMIN_DISABLED' });
      expect(admin.pause).not.toHaveBeenCalled();
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('error mapping', () => {
  it('maps the taxonomy to HTTP statuses', () => {
    expect(statusOf(new InvalidArgumentError('bad'))).toBe(400);
    expect(statusOf(new LookupError('x', { code: 'WRONG_STORE_KIND' }))).toBe(400);
    expect(statusOf(new LookupError('x', { code: 'UNKNOWN_STORE' }))).toBe(404);
    expect(statusOf(new AdjunctError('x', { code: 'UNKNOWN_PIPELINE' }))).toBe(404);
    expect(statusOf(new AdjunctError('x', { code: 'NO_PREVIOUS_GENERATION' }))).toBe(409);
    expect(statusOf(new StoreError('x', { code: 'CASSANDRA_ERROR', retriable: true }))).toBe(503);
    expect(statusOf(new StoreError('x', { code: 'CASSANDRA_ERROR' }))).toBe(500);
    expect(statusOf(new Error('x'))).toBe(500);
    expect(errorBody(new Error('secret detail'))).toEqual({ error: 'INTERNAL', message: 'internal error' });
    expect(errorBody(Object.assign(new Error('querystring/asOf must be integer'), { validation: [{}] }))).toEqual({
      error: 'BAD_REQUEST',
      message: 'querystring/asOf must be integer',
    });
  });
});

/** The HTTP server bound to loopback over a stub worker and a deferred lookup. */
const loopbackServer = (
  worker: Parameters<typeof buildHttpServer>[0]['worker'],
  reads: { source: Parameters<typeof buildHttpServer>[0]['lookup'] },
) => buildHttpServer({ worker, lookup: reads.source, config: { host: '127.0.0.1', port: 0 }, logger: createLogger('silent') });

describe('a worker still starting', () => {
  it('answers health, readiness and status, and 503 WORKER_NOT_STARTED to reads and pipeline routes until the Lookup is set', async () => {
    const { DeferredLookup } = await import('../../src/http/lookup-source');
    let state = 'STARTING';
    const worker = {
      status: () => ({ workerId: 'w1', state, pipelines: [] }),
      isReady: () => false,
      runner: () => {
        throw new AdjunctError('pipeline rates is not built yet', { code: 'WORKER_NOT_STARTED' });
      },
      metrics: { registry: new Registry() },
    };
    const reads = new DeferredLookup();
    const app = await loopbackServer(worker, reads);
    try {
      expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
      const ready = await app.inject({ url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ ready: false, workerState: 'STARTING' });
      expect((await app.inject({ url: '/status' })).json()).toMatchObject({ state: 'STARTING', pipelines: [] });
      for (const url of ['/stores', '/stores/rates', '/stores/rates/keys/EUR', '/pipelines/rates/status']) {
        const res = await app.inject({ url });
        expect({ url, status: res.statusCode, error: res.json().error }).toEqual({ url, status: 503, error: 'WORKER_NOT_STARTED' });
      }
      const pause = await app.inject({ method: 'POST', url: '/pipelines/rates/pause' });
      expect(pause.statusCode).toBe(503);

      const stores = jest.fn(async () => []);
      reads.set({ stores, close: async () => undefined } as unknown as Lookup);
      state = 'RUNNING';
      const listed = await app.inject({ url: '/stores' });
      expect(listed.statusCode).toBe(200);
      expect(listed.json()).toEqual({ stores: [] });
      expect(stores).toHaveBeenCalledTimes(1);
      expect((await app.inject({ url: '/pipelines/rates/status' })).json()).toMatchObject({ error: 'UNKNOWN_PIPELINE' });
    } finally {
      await app.close();
      await reads.close();
    }
  });
});

describe('time parameters and times in replies', () => {
  it('a date that does not exist is refused, not rolled over (2026-02-31 is not March 3rd)', async () => {
    const { parseTimeParam } = await import('../../src/http/history-page');
    expect(() => parseTimeParam('asOf', '2026-02-31')).toThrow(/invalid asOf "2026-02-31"/);
    expect(() => parseTimeParam('asOf', '2026-13-01T00:00:00Z')).toThrow(InvalidArgumentError);
    expect(parseTimeParam('asOf', '2024-02-29')).toBe(Date.UTC(2024, 1, 29));
  });

  it('a time beyond what a Date can show is named in milliseconds instead of throwing (a 404 stays a 404)', async () => {
    const { describeTime } = await import('../../src/http/history-page');
    expect(describeTime(9_000_000_000_000_000)).toBe('9000000000000000 ms');
    expect(describeTime(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});

describe('an API bound to loopback (DNS rebinding, cross-site pages)', () => {
  it('answers no route addressed to a foreign host, and refuses admin calls a browser marks cross-site', async () => {
    const { DeferredLookup } = await import('../../src/http/lookup-source');
    const pauses: string[] = [];
    const worker = {
      status: () => ({ workerId: 'w1', state: 'RUNNING', pipelines: [] }),
      isReady: () => true,
      runner: (name: string) => ({
        pause: async () => void pauses.push(name),
        resume: async () => undefined,
        reload: async () => 2,
        rollback: async () => ({ current: 1, previous: null, changed: false }),
        status: () => ({}),
      }),
      metrics: { registry: new Registry() },
    };
    const reads = new DeferredLookup();
    reads.set({ stores: async () => [], close: async () => undefined } as unknown as Lookup);
    const app = await loopbackServer(worker, reads);
    try {
      for (const url of ['/status', '/stores', '/metrics', '/healthz']) {
        const res = await app.inject({ url, headers: { host: 'attacker.example:8080' } });
        expect({ url, status: res.statusCode, error: res.json().error }).toEqual({ url, status: 403, error: 'FOREIGN_HOST' });
        expect((await app.inject({ url, headers: { host: '127.0.0.1:8080' } })).statusCode).toBe(200);
      }
      const crossSite = await app.inject({
        method: 'POST',
        url: '/pipelines/rates/pause',
        headers: { host: '127.0.0.1:8080', 'sec-fetch-site': 'cross-site' },
      });
      expect({ status: crossSite.statusCode, error: crossSite.json().error }).toEqual({ status: 403, error: 'FOREIGN_ORIGIN' });
      expect(pauses).toEqual([]);
    } finally {
      await app.close();
      await reads.close();
    }
  });
});
