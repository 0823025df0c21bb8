/**
 * A worker started while Cassandra or Kafka does not answer (frozen with SIGSTOP, as a node or broker still starting
 * or restarting): it waits with backoff inside the dependency's `startupTimeout` instead of exiting into a restart
 * loop, then starts, catches up and stores exactly the reference; past the bound it exits 4 naming the cause; a
 * SIGTERM during the wait ends it promptly (a container's stop grace is 10 s), with nothing started.
 */
import { createTopic, freePort } from '../integration/helpers';
import { names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import {
  exitWithin,
  expectTableEqualsReference,
  FAULT_RETENTION,
  genRecords,
  note,
  pauseService,
  produceAll,
  useFaultStack,
  waitOutput,
  workerDoc,
} from './lib';

/** How long the dependency stays frozen while the worker starts. */
const FROZEN_MS = 15_000;

/** One dependency's settings and log lines. */
interface Dependency {
  service: 'cassandra' | 'kafka';
  /** Settings that make one attempt last about `seconds` against a frozen service. */
  attempt(seconds: number): Record<string, unknown>;
  retrying: RegExp;
  gaveUp: RegExp;
}

const DEPENDENCIES: Dependency[] = [
  {
    // A frozen node completes the TCP handshake and then never answers: each attempt lasts the request timeout.
    service: 'cassandra',
    attempt: (s) => ({ requestTimeout: `${s}s` }),
    retrying: /Cassandra not ready at start-up: retrying/,
    gaveUp: /connecting to Cassandra at start-up failed after [2-9] attempts in \d+\.\d s: no Cassandra host answered/,
  },
  {
    service: 'kafka',
    attempt: (s) => ({ requestTimeout: `${s}s`, connectionTimeout: `${s}s` }),
    retrying: /Kafka not ready at start-up: retrying/,
    gaveUp: /connecting to Kafka at start-up failed after [2-9] attempts in \d+\.\d s: KafkaJS\w+Error/,
  },
];

describe.each(DEPENDENCIES)('fault: $service not answering when the worker starts', (dep) => {
  const stack = useFaultStack();
  const tag = dep.service.slice(0, 1);

  /** A topic with records and a worker config for it (the dependency's section merged with `settings`). */
  async function setUp(prefix: string, records: number, settings: Record<string, unknown>, http?: Record<string, unknown>) {
    const n = names(prefix);
    await createTopic(stack.kafka, n.topic, 3);
    await produceAll(await stack.producer(), n.topic, genRecords(records, 200));
    const doc = workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: FAULT_RETENTION } }]);
    Object.assign(doc[dep.service] as Record<string, unknown>, settings);
    if (http) (doc.worker as Record<string, unknown>).http = http;
    return { n, file: writeConfigFile(doc) };
  }

  it('waits (its HTTP API answering health and readiness), then starts and stores exactly the reference', async () => {
    const port = await freePort();
    const { n, file } = await setUp(`${tag}downstart`, 3000, dep.attempt(3), { enabled: true, host: '127.0.0.1', port });
    const api = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { path, status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    let spawnedAt = 0;
    await pauseService(dep.service, FROZEN_MS, async () => {
      const w = stack.spawn(file, {}, true);
      spawnedAt = Date.now();
      await waitOutput(w, dep.retrying, FROZEN_MS);
      // While it waits, a liveness probe finds it alive (no restart by the kubelet), readiness and reads say "starting".
      expect(await api('/healthz')).toEqual({ path: '/healthz', status: 200, body: { status: 'ok' } });
      expect(await api('/readyz')).toMatchObject({ status: 503, body: { ready: false, workerState: 'STARTING' } });
      expect(await api('/stores')).toMatchObject({ status: 503, body: { error: 'WORKER_NOT_STARTED' } });
      expect(await api('/status')).toMatchObject({ status: 200, body: { state: 'STARTING' } });
      // Still alive and still waiting at the end of the freeze: no exit, no restart loop.
      await new Promise((r) => setTimeout(r, FROZEN_MS - (Date.now() - spawnedAt) - 1000));
      expect({ code: w.child.exitCode, out: w.child.exitCode === null ? '' : w.output().slice(-3000) }).toEqual({ code: null, out: '' });
      expect(w.output()).not.toMatch(/worker running/);
    });
    const w = stack.procs[stack.procs.length - 1];
    await waitOutput(w, /worker running/, 120_000);
    note(`worker running ${Date.now() - spawnedAt} ms after its spawn (${dep.service} frozen for ${FROZEN_MS} ms)`);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic, 180_000);
    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g1');
    note(`table equals the reference: ${diff.actualVersions} versions of ${diff.records} records`);
    // Once running, the same server serves reads and readiness.
    expect(await api('/readyz')).toEqual({ path: '/readyz', status: 200, body: { ready: true } });
    expect(await api('/stores')).toMatchObject({ status: 200, body: { stores: [{ name: 's', kind: 'versioned' }] } });
    expect(w.child.exitCode).toBeNull();
  });

  it('past startupTimeout exits 4 (UNAVAILABLE) naming the start-up and its last error, without driver internals', async () => {
    // Attempts of 3 s against a 5 s bound: two attempts or so, the exit well inside the freeze.
    const { file } = await setUp(`${tag}downtimeout`, 100, { startupTimeout: '5s', ...dep.attempt(3) });
    let exitCode: number | null = null;
    await pauseService(dep.service, FROZEN_MS, async () => {
      const w = stack.spawn(file);
      const t0 = Date.now();
      exitCode = (await exitWithin(w, FROZEN_MS - 500))?.code ?? null;
      note(`worker exited ${exitCode} after ${Date.now() - t0} ms`);
      expect(w.output()).toMatch(dep.retrying);
      expect(w.output()).toMatch(dep.gaveUp);
      // No driver internals (stack traces, module paths) in the log, and nothing started.
      expect(w.output()).not.toMatch(/node_modules|operation-state\.js|worker running/);
    });
    expect(exitCode).toBe(4);
  });

  it('SIGTERM during the wait ends it promptly: exit 0, nothing started', async () => {
    const { file } = await setUp(`${tag}downterm`, 100, dep.attempt(10));
    let exitCode: number | null = null;
    await pauseService(dep.service, FROZEN_MS, async () => {
      const w = stack.spawn(file);
      // After start-up (1–2 s) the first attempt is under way, and would last 10 s: stop the worker in its middle.
      // (A Kafka admin client's close waits for its pending request: the stop bounds each close to 2 s.)
      await new Promise((r) => setTimeout(r, 4000));
      expect(w.child.exitCode).toBeNull();
      const t0 = Date.now();
      w.child.kill('SIGTERM');
      exitCode = (await exitWithin(w, 5000))?.code ?? null;
      note(`worker exited ${exitCode} ${Date.now() - t0} ms after SIGTERM`);
      if (exitCode !== 0) note(w.output().slice(-4000));
      expect(w.output()).not.toMatch(/worker running|worker failed/);
    });
    expect(exitCode).toBe(0);
  });
});

describe('fault: no Kafka broker listening when the worker starts (connections refused)', () => {
  const stack = useFaultStack();

  it('each attempt is one connection try, so kafka.startupTimeout is honoured: exit 4 soon after it', async () => {
    const n = names('krefused');
    // Port 1 on loopback: every connection is refused at once. kafkajs's own retry schedule would take ~38 s per attempt.
    const doc = workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: FAULT_RETENTION } }], {
      brokers: ['127.0.0.1:1'],
      startupTimeout: '4s',
    });
    const w = stack.spawn(writeConfigFile(doc));
    const t0 = Date.now();
    const exit = await exitWithin(w, 30_000);
    const ms = Date.now() - t0;
    const attempts = Number(/failed after (\d+) attempts/.exec(w.output())?.[1] ?? 0);
    note(`worker exited ${exit?.code} after ${ms} ms, ${attempts} attempts`);
    expect(exit?.code).toBe(4);
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(w.output()).toMatch(
      /connecting to Kafka at start-up failed after \d+ attempts in [4-9]\.\d s: KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127\.0\.0\.1:1/,
    );
    // The probe's kafkajs lines are at debug: the log has one warning per retry, not kafkajs's ERROR lines.
    expect(w.output()).not.toMatch(/"level":50[^\n]*"component":"kafkajs"/);
  });
});
