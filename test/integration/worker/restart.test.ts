import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { FastifyInstance } from 'fastify';
import { buildHttpServer, listen } from '../../../src/http/server';
import { Lookup, openLookup } from '../../../src/lookup';
import { silentLogger } from '../../../src/observability/logger';
import { createTopic } from '../helpers';
import { configDoc, eventually, names, pipelineGroup, startWorker, useStack, waitCaughtUp } from './harness';

jest.setTimeout(180_000);

// Kafka Connect–style restart against a real worker: with worker.pipelineFailure isolate, a pipeline that FAILED on a
// fatal error stays FAILED while the other pipelines run; once the cause is fixed, POST /pipelines/:name/restart
// restarts it in place from its committed offsets, without restarting the worker.

describe('POST /pipelines/:name/restart (real worker, Kafka and Cassandra)', () => {
  const stack = useStack();
  let app: FastifyInstance | undefined;
  let lookup: Lookup | undefined;
  afterEach(async () => {
    await app?.close();
    await lookup?.close();
  });

  it('restarts a FAILED pipeline from its committed offsets; the worker and the other pipeline keep running', async () => {
    const n = names('restart');
    const steadyTopic = `${n.topic}-steady`;
    await createTopic(stack.kafka, n.topic, 1);
    await createTopic(stack.kafka, steadyTopic, 1);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adjunct-restart-'));
    const flag = path.join(dir, 'reference-data-missing');
    fs.writeFileSync(
      path.join(dir, 'flaky.js'),
      `const fs = require('fs');
exports.extract = (r) => {
  if (r.value && r.value.needsReference && fs.existsSync(${JSON.stringify(flag)})) throw new Error('reference data missing');
  return { key: r.key, value: r.value, timestamp: r.timestamp };
};
`,
    );
    fs.writeFileSync(flag, '');
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'a', value: JSON.stringify({ v: 1 }), timestamp: '1000' },
        { key: 'b', value: JSON.stringify({ v: 2, needsReference: true }), timestamp: '2000' },
        { key: 'c', value: JSON.stringify({ v: 3 }), timestamp: '3000' },
      ],
    });
    await producer.send({ topic: steadyTopic, messages: [{ key: 's', value: JSON.stringify({ v: 1 }), timestamp: '1000' }] });

    const doc = configDoc(n.keyspace, n.group, [
      { name: 'flaky', topics: [n.topic], extract: { module: path.join(dir, 'flaky.js') }, store: { name: 'flaky' } },
      { name: 'steady', topics: [steadyTopic], store: { name: 'steady' } },
    ]);
    (doc.worker as Record<string, unknown>).pipelineFailure = 'isolate';
    const worker = await startWorker(doc);
    stack.worker = worker;
    lookup = await openLookup({ client: worker.cassandraClient!, keyspace: n.keyspace, generationCacheMs: 0 });
    app = await buildHttpServer({ worker, lookup, config: { host: '127.0.0.1', port: 0 }, logger: silentLogger });
    const base = await listen(app, { host: '127.0.0.1', port: 0 });
    const status = async (name: string) => (await fetch(`${base}/pipelines/${name}/status`)).json() as Promise<Record<string, any>>;

    const failed = await eventually(
      async () => {
        const s = await status('flaky');
        return s.state === 'FAILED' && s;
      },
      60_000,
      'flaky FAILED',
    );
    expect(failed.lastError).toMatch(/reference data missing|BAD_RECORD|EXTRACT/i);
    expect(failed.lastError).not.toMatch(/\n\s+at |\.js:\d+/);
    expect(worker.state).toBe('RUNNING');
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'steady'), steadyTopic);
    expect((await status('steady')).state).toBe('RUNNING');
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    expect((await lookup.store('flaky').get('a'))?.value).toEqual({ v: 1 });
    expect(await lookup.store('flaky').get('c')).toBeNull();

    // Fix the cause, then restart: the task resumes at the record that failed (nothing was committed past it).
    fs.rmSync(flag);
    const res = await fetch(`${base}/pipelines/flaky/restart`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ pipeline: 'flaky', action: 'restart' });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'flaky'), n.topic);
    expect((await lookup.store('flaky').get('b'))?.value).toEqual({ v: 2, needsReference: true });
    expect((await lookup.store('flaky').get('c'))?.value).toEqual({ v: 3 });
    const after = await status('flaky');
    expect(after.state).toBe('RUNNING');
    expect(after.lastError).toBeNull();
    expect(worker.state).toBe('RUNNING');
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const again = await fetch(`${base}/pipelines/flaky/restart`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: string }).error).toBe('PIPELINE_NOT_FAILED');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
