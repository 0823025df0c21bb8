import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync } from 'fs';
import { request as httpsRequest } from 'https';
import { connect } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { Client } from 'cassandra-driver';
import type { FastifyInstance } from 'fastify';
import { AdjunctError } from '../../../src/errors';
import { buildHttpServer, HttpWorker, listen } from '../../../src/http/server';
import { MAX_PARAM_LENGTH } from '../../../src/http/build-server';
import { Lookup, openLookup } from '../../../src/lookup';
import { silentLogger } from '../../../src/observability/logger';
import { AdjunctMetrics } from '../../../src/observability/metrics';
import { cleanUp, newCassandraClient, uniqueName } from '../helpers';
import { prepareKeyspace, seed } from '../lookup/fixtures';

jest.setTimeout(120_000);

// HTTP misuse against the real server: every request goes over a real socket to a listening fastify backed by Cassandra.

const keyspace = uniqueName('it_http_misuse');
const ADMIN = 'admin-token-0123456789';
const READ = 'read-token-0123456789';
const VERSIONS = 300;
let client: Client;
let lookup: Lookup;

class FakeWorker implements HttpWorker {
  readonly calls: string[] = [];
  readonly metrics = new AdjunctMetrics({ defaultMetrics: false });
  status() {
    return { workerId: 'fake', state: 'RUNNING', pipelines: [{ name: 'p' }] };
  }
  isReady() {
    return true;
  }
  runner(name: string) {
    if (name !== 'p') throw new AdjunctError(`unknown pipeline ${name}`, { code: 'UNKNOWN_PIPELINE', stage: 'config' });
    return {
      state: 'RUNNING',
      pause: async () => void this.calls.push('pause'),
      resume: async () => void this.calls.push('resume'),
      reload: async () => 2,
      rollback: async (to: number) => ({ current: to, previous: 2, changed: true }),
    };
  }
}

const servers: FastifyInstance[] = [];
async function start(config: Record<string, unknown>, worker: HttpWorker = new FakeWorker()): Promise<string> {
  const app = await buildHttpServer({ worker, lookup, config: { host: '127.0.0.1', port: 0, ...config }, logger: silentLogger });
  servers.push(app);
  return listen(app, { host: '127.0.0.1', port: 0 });
}

let base: string;
const worker = new FakeWorker();

beforeAll(async () => {
  client = await newCassandraClient();
  await prepareKeyspace(client, keyspace);
  const big = 'v'.repeat(8_000);
  await seed(
    client,
    keyspace,
    { store: 'rates', kind: 'versioned', scope: 'global' },
    Array.from({ length: VERSIONS }, (_, i) => ({ key: 'eur', value: { i, pad: big }, ts: 1_000 + i * 10 })),
  );
  await seed(client, keyspace, { store: 'fruits', kind: 'kv', scope: 'global' }, [{ key: 'apple', value: { k: 'apple' } }]);
  lookup = await openLookup({ client, keyspace });
  base = await start({}, worker);
});

afterAll(() =>
  cleanUp(
    ...servers.map((s) => () => s.close()),
    () => lookup?.close(),
    () => client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`),
    () => client?.shutdown(),
  ),
);

const json = async (r: Response | Promise<Response>): Promise<any> => (await r).json();

type Version = { value: { i: number }; timestamp: number; validTo?: number };

async function allPages(url: string): Promise<{ pages: number; versions: Version[]; maxBytes: number }> {
  const versions: Version[] = [];
  let pages = 0;
  let maxBytes = 0;
  let next: string | undefined;
  do {
    const res = await fetch(`${url}${next === undefined ? '' : `${url.includes('?') ? '&' : '?'}cursor=${next}`}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    maxBytes = Math.max(maxBytes, Buffer.byteLength(text));
    const body = JSON.parse(text);
    versions.push(...body.versions);
    next = body.nextCursor;
    pages++;
  } while (next !== undefined && pages < 1000);
  return { pages, versions, maxBytes };
}

describe('history is bounded', () => {
  it('default limit 100, a cursor for the next page, every version exactly once, in order', async () => {
    const first = await json(fetch(`${base}/stores/rates/keys/eur/history`));
    expect(first.versions).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const asc = await allPages(`${base}/stores/rates/keys/eur/history?order=asc&limit=70`);
    expect(asc.versions.map((v) => v.value.i)).toEqual(Array.from({ length: VERSIONS }, (_, i) => i));
    const desc = await allPages(`${base}/stores/rates/keys/eur/history?order=desc&limit=77`);
    expect(desc.versions.map((v) => v.value.i)).toEqual(Array.from({ length: VERSIONS }, (_, i) => VERSIONS - 1 - i));
    const ranged = await allPages(`${base}/stores/rates/keys/eur/history?order=asc&from=1500&to=2000&limit=7`);
    expect(ranged.versions.map((v) => v.timestamp)).toEqual(Array.from({ length: 51 }, (_, i) => 1_500 + i * 10));
  });

  it('max limit 1000; a reply never exceeds the byte cap', async () => {
    expect((await fetch(`${base}/stores/rates/keys/eur/history?limit=1001`)).status).toBe(400);
    const capped = await start({ maxReplyBytes: 50_000 });
    const r = await allPages(`${capped}/stores/rates/keys/eur/history?limit=1000`);
    expect(r.versions).toHaveLength(VERSIONS);
    expect(r.maxBytes).toBeLessThanOrEqual(50_000 + 500);
    expect(r.pages).toBeGreaterThan(VERSIONS / 7);
  });

  it('a cursor of the other order or a forged cursor is a 400', async () => {
    const first = await json(fetch(`${base}/stores/rates/keys/eur/history?limit=5`));
    expect((await fetch(`${base}/stores/rates/keys/eur/history?order=asc&cursor=${first.nextCursor}`)).status).toBe(400);
    expect((await fetch(`${base}/stores/rates/keys/eur/history?cursor=AAAA`)).status).toBe(400);
  });
});

describe('query and path misuse', () => {
  it('unknown query parameters are a 400 on every route', async () => {
    for (const url of [
      '/stores?x=1',
      '/stores/rates?x=1',
      '/stores/rates/keys/eur?asof=5',
      '/stores/rates/keys/eur/history?limt=5',
      '/stores/fruits/range?foo=1',
      '/status?verbose=1',
      '/healthz?x=1',
    ]) {
      const res = await fetch(`${base}${url}`);
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect((await json(res)).error).toBe('BAD_REQUEST');
    }
  });

  it('asOf, from and to accept ISO-8601 as well as epoch ms', async () => {
    const iso = new Date(1_005).toISOString();
    expect((await json(fetch(`${base}/stores/rates/keys/eur?asOf=${iso}`))).value.i).toBe(0);
    expect((await json(fetch(`${base}/stores/rates/keys/eur?asOf=1015`))).value.i).toBe(1);
    const h = await json(
      fetch(`${base}/stores/rates/keys/eur/history?order=asc&from=${new Date(1_500).toISOString()}&to=${new Date(1_520).toISOString()}`),
    );
    expect(h.versions.map((v: Version) => v.timestamp)).toEqual([1_500, 1_510, 1_520]);
    expect((await fetch(`${base}/stores/rates/keys/eur?asOf=yesterday`)).status).toBe(400);
  });

  it('a key longer than the route limit is a 414, not a 404', async () => {
    const res = await fetch(`${base}/stores/rates/keys/${'k'.repeat(MAX_PARAM_LENGTH + 1)}`);
    expect(res.status).toBe(414);
    expect((await json(res)).error).toBe('URI_TOO_LONG');
    expect((await fetch(`${base}/stores/rates/keys/${'k'.repeat(MAX_PARAM_LENGTH)}`)).status).toBe(404);
  });
});

describe('admin routes are not reachable cross-site', () => {
  const post = (url: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${base}${url}`, { method: 'POST', headers, body });

  it('a text/plain POST with a foreign Origin does not pause the pipeline', async () => {
    worker.calls.length = 0;
    expect((await post('/pipelines/p/pause', { origin: 'http://evil.example', 'content-type': 'text/plain' }, 'x')).status).toBe(403);
    expect((await post('/pipelines/p/pause', { 'content-type': 'text/plain' }, 'x')).status).toBe(415);
    expect((await post('/pipelines/p/pause', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=b')).status).toBe(415);
    expect(worker.calls).toEqual([]);
    expect((await post('/pipelines/p/pause')).status).toBe(200);
    expect((await post('/pipelines/p/resume', { 'content-type': 'application/json' }, '{}')).status).toBe(200);
    expect((await post('/pipelines/p/resume', { origin: base })).status).toBe(200);
    expect(worker.calls).toEqual(['pause', 'resume', 'resume']);
  });

  it('a foreign Host (DNS rebinding) is refused on a loopback bind', async () => {
    const port = new URL(base).port;
    const status = await rawStatus(
      Number(port),
      `POST /pipelines/p/pause HTTP/1.1\r\nHost: evil.example:${port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    expect(status).toBe(403);
    expect(worker.calls).not.toContain('pause:evil');
  });
});

describe('tokens, TLS and timeouts', () => {
  it('an optional read token guards reads (the probes stay open; the admin token also reads)', async () => {
    const url = await start({ readToken: READ, adminToken: ADMIN });
    expect((await fetch(`${url}/stores/fruits/keys/apple`)).status).toBe(401);
    expect((await fetch(`${url}/status`)).status).toBe(401);
    expect((await fetch(`${url}/stores/fruits/keys/apple`, { headers: { authorization: `Bearer ${READ}` } })).status).toBe(200);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await fetch(`${url}/pipelines/p/pause`, { method: 'POST', headers: { authorization: `Bearer ${READ}` } })).status).toBe(401);
    await expect(
      buildHttpServer({ lookup, config: { host: '127.0.0.1', port: 0, readToken: 'short' }, logger: silentLogger }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('serves HTTPS with the configured key and certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'adjunct-tls-'));
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const url = await start({ tls: { keyFile, certFile } });
    expect(url.startsWith('https://')).toBe(true);
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(`${url}/stores/fruits/keys/apple`, { ca: readFileSync(certFile) }, (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve(data));
      });
      req.on('error', reject);
      req.end();
    });
    expect(JSON.parse(body)).toMatchObject({ value: { k: 'apple' } });
    await expect(
      buildHttpServer({
        lookup,
        config: { host: '127.0.0.1', port: 0, tls: { keyFile: join(dir, 'missing.pem'), certFile } },
        logger: silentLogger,
      }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('a request that never completes does not hold its socket (connection timeout closes it, at most with a 408)', async () => {
    const url = await start({ requestTimeout: 500, connectionTimeout: 500 });
    const status = await rawStatus(Number(new URL(url).port), 'GET /stores HTTP/1.1\r\nHost: localhost\r\n');
    expect([0, 408]).toContain(status);
  });
});

/** Sends raw bytes and resolves with the status code of the first reply (or 0 when the socket closes without one). */
function rawStatus(port: number, bytes: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(bytes));
    let data = '';
    sock.on('data', (c) => (data += c));
    sock.on('error', reject);
    sock.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
  });
}
