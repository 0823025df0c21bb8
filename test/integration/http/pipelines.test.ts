import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { FastifyInstance } from 'fastify';
import { buildHttpServer, listen } from '../../../src/http/server';
import { Lookup, openLookup } from '../../../src/lookup';
import { silentLogger } from '../../../src/observability/logger';
import { Worker } from '../../../src/worker/worker';
import { cleanUp, createTopic } from '../helpers';
import { configDoc, eventually, names, pipelineGroup, startWorker, useStack, waitCaughtUp } from '../worker/harness';

jest.setTimeout(180_000);

// Kafka Connect–style status and control routes over a real socket, on a real worker (Kafka, Cassandra): pipeline
// `rates` FAILS on a record its extractor cannot take (worker.pipelineFailure isolate keeps the worker and `fx`
// running); once the cause is gone, POST /pipelines/rates/restart restarts it in place.

const TOKEN = 'pipelines-admin-token-0123';
const DAY = 86_400_000;
/** The extractor's failure names an address and a socket error: none of it may reach a reply. */
const INTERNALS = 'reference service unreachable: connect ECONNREFUSED 10.0.0.7:9042';

const json = async (r: Response | Promise<Response>): Promise<any> => (await r).json();

describe('pipeline status and restart routes (real worker)', () => {
  const stack = useStack();
  const n = names('http_pipes');
  const ratesTopic = `${n.topic}-rates`;
  const fxTopic = `${n.topic}-fx`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adjunct-http-pipes-'));
  const flag = path.join(dir, 'reference-service-down');
  let worker: Worker;
  let lookup: Lookup;
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    await createTopic(stack.kafka, ratesTopic, 1);
    await createTopic(stack.kafka, fxTopic, 1);
    fs.writeFileSync(
      path.join(dir, 'rates.js'),
      `const fs = require('fs');
exports.extract = (r) => {
  if (r.value && r.value.needsReference && fs.existsSync(${JSON.stringify(flag)})) throw new Error(${JSON.stringify(INTERNALS)});
  return { key: r.key, value: r.value, timestamp: r.timestamp };
};
`,
    );
    fs.writeFileSync(flag, '');
    const producer = await stack.producer();
    await producer.send({
      topic: ratesTopic,
      messages: [
        { key: 'eur', value: JSON.stringify({ rate: 1 }), timestamp: String(DAY) },
        { key: 'usd', value: JSON.stringify({ rate: 2, needsReference: true }), timestamp: String(DAY) },
        { key: 'gbp', value: JSON.stringify({ rate: 3 }), timestamp: String(DAY) },
      ],
    });
    await producer.send({ topic: fxTopic, messages: [{ key: 'eurusd', value: JSON.stringify({ fx: 1.1 }), timestamp: String(DAY) }] });
    const doc = configDoc(n.keyspace, n.group, [
      {
        name: 'rates',
        topics: [ratesTopic],
        extract: { module: path.join(dir, 'rates.js') },
        store: { name: 'rates', historyRetention: DAY },
      },
      { name: 'fx', topics: [fxTopic], store: { name: 'fx', historyRetention: DAY } },
    ]);
    (doc.worker as Record<string, unknown>).pipelineFailure = 'isolate';
    worker = await startWorker(doc);
    lookup = await openLookup({ client: worker.cassandraClient!, keyspace: n.keyspace });
    app = await buildHttpServer({ worker, lookup, config: { host: '127.0.0.1', port: 0, adminToken: TOKEN }, logger: silentLogger });
    base = await listen(app, { host: '127.0.0.1', port: 0 });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'fx'), fxTopic);
    await eventually(async () => worker.runner('rates').status().state === 'FAILED', 60_000, 'rates FAILED');
  });

  afterAll(() =>
    cleanUp(
      () => app?.close(),
      () => lookup?.close(),
      () => worker?.stop(),
      () => fs.rmSync(dir, { recursive: true, force: true }),
    ),
  );

  it('GET /pipelines lists name, state and generation', async () => {
    const res = await fetch(`${base}/pipelines`);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      worker: worker.workerId,
      state: 'RUNNING',
      pipelines: [
        { name: 'rates', state: 'FAILED', generation: 1 },
        { name: 'fx', state: 'RUNNING', generation: 1 },
      ],
    });
  });

  it('GET /pipelines/:name/status: per-partition lag and stream time, last error without driver internals', async () => {
    const fx = await eventually(
      async () => {
        const s = await json(fetch(`${base}/pipelines/fx/status`));
        return s.partitions?.[0]?.committedOffset === '1' && s;
      },
      30_000,
      'fx status with its committed offset',
    );
    expect(fx).toMatchObject({
      name: 'fx',
      state: 'RUNNING',
      generation: 1,
      store: 'fx',
      worker: worker.workerId,
      lastError: null,
      partitions: [
        {
          topic: fxTopic,
          partition: 0,
          lag: 0,
          committedOffset: '1',
          endOffset: '1',
          streamTime: DAY,
          streamTimeIso: '1970-01-02T00:00:00.000Z',
          horizon: 0,
          horizonIso: '1970-01-01T00:00:00.000Z',
        },
      ],
    });
    const rates = await json(fetch(`${base}/pipelines/rates/status`));
    expect(rates).toMatchObject({ name: 'rates', state: 'FAILED', generation: 1, store: 'rates', worker: worker.workerId });
    expect(rates.lastError).toBe(`BAD_RECORD: pipeline rates stopped at ${ratesTopic}/0@1 (stage extract)`);
    expect(JSON.stringify(rates)).not.toMatch(/10\.0\.0\.7|ECONNREFUSED|unreachable|\.js:\d+/);
    const unknown = await fetch(`${base}/pipelines/nope/status`);
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error).toBe('UNKNOWN_PIPELINE');
    expect((await fetch(`${base}/pipelines/rates/status?verbose=1`)).status).toBe(400);
  });

  it('POST /pipelines/:name/restart needs the admin token and restarts only a FAILED pipeline', async () => {
    const post = (name: string, auth = true) =>
      fetch(`${base}/pipelines/${name}/restart`, { method: 'POST', headers: auth ? { authorization: `Bearer ${TOKEN}` } : {} });
    expect((await post('rates', false)).status).toBe(401);
    expect(worker.runner('rates').status().state).toBe('FAILED');
    fs.rmSync(flag);
    const ok = await post('rates');
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({ pipeline: 'rates', action: 'restart', state: 'RUNNING' });
    expect((await json(fetch(`${base}/pipelines/rates/status`))).lastError).toBeNull();
    const again = await post('rates');
    expect(again.status).toBe(409);
    expect((await json(again)).error).toBe('PIPELINE_NOT_FAILED');
    expect((await post('ghost')).status).toBe(404);
    // The restarted task resumed at the record that failed: nothing was committed past it, nothing is lost.
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), ratesTopic);
    expect((await lookup.store('rates').get('usd'))?.value).toEqual({ rate: 2, needsReference: true });
    expect((await lookup.store('rates').get('gbp'))?.value).toEqual({ rate: 3 });
  });
});
