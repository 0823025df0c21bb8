import { Client } from 'cassandra-driver';
import type { FastifyInstance } from 'fastify';
import { AdjunctError, publicErrorText } from '../../../src/errors';
import { buildHttpServer, HttpWorker, listen } from '../../../src/http/server';
import { Lookup, openLookup } from '../../../src/lookup';
import { silentLogger } from '../../../src/observability/logger';
import { AdjunctMetrics } from '../../../src/observability/metrics';
import { cleanUp, newCassandraClient, uniqueName } from '../helpers';
import { prepareKeyspace } from '../lookup/fixtures';

jest.setTimeout(120_000);

// Kafka Connect–style status and control routes over a real socket (the worker is a stand-in; the real restart is
// covered in test/integration/worker/restart.test.ts).

const keyspace = uniqueName('it_http_pipes');
const TOKEN = 'pipelines-admin-token-0123';
let client: Client;
let lookup: Lookup;
let app: FastifyInstance;
let base: string;

const driverFailure = new Error(
  'All host(s) tried for query failed. First host tried, 10.0.0.7:9042: Error: connect ECONNREFUSED 10.0.0.7:9042',
);
const fatal = new AdjunctError(`pipeline rates: write failed: ${driverFailure.message}`, { code: 'CASSANDRA_ERROR', cause: driverFailure });

const json = async (r: Response | Promise<Response>): Promise<any> => (await r).json();

let state = 'FAILED';
const worker: HttpWorker = {
  metrics: new AdjunctMetrics({ defaultMetrics: false }),
  isReady: () => state !== 'FAILED',
  status: () => ({
    workerId: 'w-1',
    state: 'RUNNING',
    pipelines: [
      {
        name: 'rates',
        state,
        generation: 3,
        store: 'rates',
        lastError: state === 'FAILED' ? publicErrorText(fatal) : undefined,
        partitions: [
          {
            topic: 'rates-cl',
            partition: 0,
            committedOffset: '40',
            endOffset: '42',
            lag: 2,
            inFlight: 0,
            streamTime: 86_400_000,
            horizon: 0,
          },
        ],
      },
      { name: 'fx', state: 'RUNNING', generation: 1, partitions: [] },
    ],
  }),
  runner: (name: string) => {
    if (name !== 'rates' && name !== 'fx') throw new AdjunctError(`unknown pipeline ${name}`, { code: 'UNKNOWN_PIPELINE' });
    return {
      pause: async () => undefined,
      resume: async () => undefined,
      reload: async () => 2,
      rollback: async (to: number) => ({ current: to, previous: 2, changed: true }),
      restart: async () => {
        if (name !== 'rates' || state !== 'FAILED')
          throw new AdjunctError(`pipeline ${name} is ${name === 'rates' ? state : 'RUNNING'}, not FAILED: nothing to restart`, {
            code: 'PIPELINE_NOT_FAILED',
          });
        state = 'RUNNING';
        return state;
      },
    };
  },
};

beforeAll(async () => {
  client = await newCassandraClient();
  await prepareKeyspace(client, keyspace);
  lookup = await openLookup({ client, keyspace });
  app = await buildHttpServer({ worker, lookup, config: { host: '127.0.0.1', port: 0, adminToken: TOKEN }, logger: silentLogger });
  base = await listen(app, { host: '127.0.0.1', port: 0 });
});

afterAll(() =>
  cleanUp(
    () => app?.close(),
    () => lookup?.close(),
    () => client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`),
    () => client?.shutdown(),
  ),
);

it('GET /pipelines lists name, state and generation', async () => {
  const res = await fetch(`${base}/pipelines`);
  expect(res.status).toBe(200);
  expect(await json(res)).toEqual({
    worker: 'w-1',
    state: 'RUNNING',
    pipelines: [
      { name: 'rates', state: 'FAILED', generation: 3 },
      { name: 'fx', state: 'RUNNING', generation: 1 },
    ],
  });
});

it('GET /pipelines/:name/status: per-partition lag and stream time, last error without driver internals', async () => {
  const body = await json(fetch(`${base}/pipelines/rates/status`));
  expect(body).toMatchObject({
    name: 'rates',
    state: 'FAILED',
    generation: 3,
    worker: 'w-1',
    partitions: [
      {
        topic: 'rates-cl',
        partition: 0,
        lag: 2,
        committedOffset: '40',
        endOffset: '42',
        streamTime: 86_400_000,
        streamTimeIso: '1970-01-02T00:00:00.000Z',
        horizon: 0,
        horizonIso: '1970-01-01T00:00:00.000Z',
      },
    ],
  });
  expect(body.lastError).toBe('CASSANDRA_ERROR: pipeline rates: write failed');
  expect(JSON.stringify(body)).not.toMatch(/10\.0\.0\.7|ECONNREFUSED|host\(s\)/);
  const unknown = await fetch(`${base}/pipelines/nope/status`);
  expect(unknown.status).toBe(404);
  expect((await json(unknown)).error).toBe('UNKNOWN_PIPELINE');
  expect((await fetch(`${base}/pipelines/rates/status?verbose=1`)).status).toBe(400);
});

it('POST /pipelines/:name/restart needs the admin token and restarts only a FAILED pipeline', async () => {
  const post = (name: string, auth = true) =>
    fetch(`${base}/pipelines/${name}/restart`, { method: 'POST', headers: auth ? { authorization: `Bearer ${TOKEN}` } : {} });
  expect((await post('rates', false)).status).toBe(401);
  expect(state).toBe('FAILED');
  const ok = await post('rates');
  expect(ok.status).toBe(200);
  expect(await json(ok)).toEqual({ pipeline: 'rates', action: 'restart', state: 'RUNNING' });
  expect((await json(fetch(`${base}/pipelines/rates/status`))).lastError).toBeNull();
  const again = await post('rates');
  expect(again.status).toBe(409);
  expect((await json(again)).error).toBe('PIPELINE_NOT_FAILED');
  expect((await post('ghost')).status).toBe(404);
});
