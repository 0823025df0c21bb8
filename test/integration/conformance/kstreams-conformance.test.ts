/**
 * Conformance with Kafka Streams itself: one changelog topic is materialised by a real Kafka Streams 4.1 application
 * into `Stores.persistentVersionedKeyValueStore` (test/conformance/kstreams, queried with IQv2 VersionedKeyQuery and
 * MultiVersionedKeyQuery) and by adjunct's worker into a global, a partitioned and an edge-layout global versioned store. Every key is then
 * probed on both at many times (each version timestamp ±1, each partition's horizon ±1, far past and future), live and
 * again after a worker restart with more records. Only two Kafka Streams artefacts are tolerated (see compare.ts).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Lookup, openLookup } from '../../../src/lookup';
import { Worker } from '../../../src/worker/worker';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { cleanUp, uniqueName } from '../helpers';
import { configDoc, names, pipelineGroup, startWorker, useStack, waitCaughtUp } from '../worker/harness';
import { askAdjunct, compare, describeDisagreements } from './compare';
import { buildReference, KStreamsReference, Probe, ProbeAnswer, Version } from './kstreams-reference';
import { BASE, ChangeRecord, FAR_FUTURE, FAR_PAST, horizons, PARTITIONS, probes, RETENTION_MS, scenario } from './scenario';

/** The stores under test: `v<name>`, of each scope, and a global one of the edge layout. */
const SCOPES = ['global', 'partitioned', 'edges'] as const;
const scopeOf = (name: (typeof SCOPES)[number]) => (name === 'partitioned' ? 'partitioned' : 'global');
const t = (offset: number) => BASE + offset;
const v = (value: string, from: number, to: number | null = null): Version => ({
  value,
  timestamp: t(from),
  validTo: to === null ? null : t(to),
});
const get = (partition: number, key: string, asOf?: number): Probe => ({ op: 'get', partition, key, asOf });
const history = (partition: number, key: string): Probe => ({ op: 'history', partition, key, fromTime: FAR_PAST, toTime: FAR_FUTURE });

describe('conformance: adjunct versioned stores answer like Kafka Streams (KIP-889, KIP-968)', () => {
  const stack = useStack();
  const n = names('ksconf');
  const applicationId = uniqueName('ksconf_app');
  const { phaseOne, phaseTwo } = scenario();
  const pipelines = SCOPES.map((scope) => ({
    name: `v${scope}`,
    topics: [n.topic],
    keyConverter: 'string',
    valueConverter: 'string',
    store: {
      name: `v${scope}`,
      kind: 'versioned',
      scope: scopeOf(scope),
      historyRetention: RETENTION_MS,
      keySerde: 'string',
      valueSerde: 'string',
      ...(scope === 'edges' ? { layout: 'edges' } : {}),
    },
  }));
  let reference: KStreamsReference | undefined;
  let worker: Worker | undefined;
  let lookup: Lookup;

  const produce = async (records: ChangeRecord[]) => {
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: records.map((r) => ({ partition: r.partition, key: r.key, value: r.value, timestamp: String(r.timestamp) })),
    });
  };
  const caughtUp = async () => {
    await waitCaughtUp(stack.admin, applicationId, n.topic).catch((e: Error) => {
      throw new Error(`${e.message}\n${reference?.diagnostics()}`);
    });
    for (const p of pipelines) await waitCaughtUp(stack.admin, pipelineGroup(n.group, p.name), n.topic);
  };
  const startAdjunct = async () => {
    worker = await startWorker(configDoc(n.keyspace, n.group, pipelines));
  };

  beforeAll(async () => {
    const classpath = buildReference();
    // The scenario's event times are in 2001: without retention.ms = -1 the broker's retention check may delete the
    // records (it rolls and deletes even the active segment) before both sides have read them.
    await stack.admin.createTopics({
      topics: [{ topic: n.topic, numPartitions: PARTITIONS, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '-1' }] }],
      waitForLeaders: true,
    });
    await produce(phaseOne);
    const starting = KStreamsReference.start(classpath, {
      bootstrap: stackEndpoints().kafkaBrokers.join(','),
      topic: n.topic,
      applicationId,
      historyRetentionMs: RETENTION_MS,
    });
    starting.catch(() => undefined); // awaited below; the worker starts meanwhile
    await startAdjunct();
    reference = await starting;
    await caughtUp();
    lookup = await openLookup({ client: stack.client, keyspace: n.keyspace });
  }, 600_000);

  afterAll(
    () =>
      cleanUp(
        () => worker?.stop(),
        () => reference?.close(),
        () => lookup?.close(),
      ),
    60_000,
  );

  /** The reference's answers per phase (the same for both scopes), with how long they took. */
  const referenceAnswers = new Map<string, Promise<[ProbeAnswer[], number]>>();
  const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
    const start = Date.now();
    return [await f(), Date.now() - start];
  };

  /** Asks both sides every probe for the records so far and fails with a readable diff on any disagreement. */
  const expectSameAnswers = async (scope: (typeof SCOPES)[number], records: ChangeRecord[], phase: string) => {
    const ps = probes(records);
    const hs = horizons(records);
    lookup.invalidate(); // the writers' stream times as they are now
    if (!referenceAnswers.has(phase))
      referenceAnswers.set(
        phase,
        timed(() => reference!.ask(ps)),
      );
    const [[ks, ksMs], [ad, adMs]] = await Promise.all([
      referenceAnswers.get(phase)!,
      timed(() => askAdjunct(lookup.store<string, string>(`v${scope}`), ps)),
    ]);
    // The probes are not vacuous: Kafka Streams finds versions for many of them.
    expect(ks.filter((a) => a !== null && (!Array.isArray(a) || a.length > 0)).length).toBeGreaterThan(ps.length / 3);
    const c = compare(ps, ks, ad, (p) => hs.get(p)!);
    if (c.disagreements.length === 0) return;
    const file = path.join(os.tmpdir(), `adjunct-kstreams-conformance-${scope}-${phase.replace(/\W+/g, '-')}.json`);
    fs.writeFileSync(file, JSON.stringify({ horizons: Object.fromEntries(hs), disagreements: c.disagreements }, null, 1));
    throw new Error(
      `${describeDisagreements(`${scope} store, ${phase} (answered in ${ksMs} ms by Kafka Streams, ${adMs} ms by adjunct)`, c)}\n  (all of them: ${file})`,
    );
  };

  describe('live', () => {
    it('the reference (Kafka Streams) gives the hand-computed KIP-889 answers', async () => {
      // Horizons: p0 40000 − 10000 = 30000, p1 7000, p2 −6000.
      const expected: [Probe, ProbeAnswer][] = [
        [get(0, 'a', t(30_000)), v('', 30_000, 32_000)], // asOf at the horizon is answered; '' is a value
        [get(0, 'a', t(32_000)), v('dup2', 32_000, 40_000)], // same key and timestamp: the second put replaced the first
        [get(0, 'a', t(29_999)), null], // below the horizon only the latest answers, and it is younger
        [get(0, 'a'), v('last', 40_000)],
        [get(0, 'a', FAR_FUTURE), v('last', 40_000)],
        [get(0, 'Zürich', t(31_500)), v('z2', 31_000, 33_000)],
        [get(0, 'Zürich', t(33_000)), null], // tombstone
        [get(1, '東京', t(7_000)), v('t2', 5_000, 17_000)], // put exactly at the horizon was applied
        [get(1, '東京', t(6_999)), null],
        [get(1, '東京', t(17_000)), v('', 17_000)],
        [get(1, 'b', t(16_000)), v('b4', 16_000)], // a value replaced the tombstone of the same timestamp
        [get(1, 'b', t(15_500)), v('b3', 15_000, 16_000)],
        [get(2, 'c', t(1_500)), v('c1b', 1_000, 2_000)], // out of order within retention
        [get(2, 'c', t(999)), v('c1', 0, 1_000)],
        [get(2, 'c', t(4_000)), v('', 4_000)],
        [get(2, '🙂 emoji', t(2_000)), v('e1', 1_500, 2_500)],
        [get(2, '🙂 emoji'), null],
        // 'late-ok' (12000..20000) and 'a3' are expired; 'too-late' (9999) was never put; the tombstone is no version.
        [history(0, 'a'), [v('', 30_000, 32_000), v('dup2', 32_000, 40_000), v('last', 40_000)]],
        [history(1, 'b'), [v('b2', 3_000, 15_000), v('b3', 15_000, 16_000), v('b4', 16_000)]], // b1 expired, 'b-late' never put
        [history(2, 'c'), [v('c1', 0, 1_000), v('c1b', 1_000, 2_000), v('c2', 2_000, 4_000), v('', 4_000)]],
      ];
      expect(await reference!.ask(expected.map(([p]) => p))).toEqual(expected.map(([, a]) => a));
    });

    for (const scope of SCOPES) {
      it(`a ${scope} store answers every probe like Kafka Streams`, () => expectSameAnswers(scope, phaseOne, 'live'));
    }
  });

  describe('after a worker restart, with records produced while it was down', () => {
    beforeAll(async () => {
      await worker?.stop();
      worker = undefined;
      await produce(phaseTwo);
      await startAdjunct();
      await caughtUp();
    }, 120_000);

    it('the reference (Kafka Streams) gives the hand-computed KIP-889 answers', async () => {
      // Horizons: p0 45000 − 10000 = 35000, p1 8000, p2 −4000.
      const expected: [Probe, ProbeAnswer][] = [
        [get(0, 'a', t(35_000)), v('dup2', 32_000, 40_000)],
        [history(0, 'a'), [v('dup2', 32_000, 40_000), v('last', 40_000, 45_000), v('p2', 45_000)]], // 'p2-too-late' never put
        [get(0, 'Zürich', t(34_000)), null],
        [get(0, 'Zürich', t(36_000)), v('z3', 36_000)],
        [get(1, '東京', t(8_000)), v('t3', 8_000, 17_000)],
        [get(2, '🙂 emoji', t(1_000)), v('e3', 500, 1_500)],
        [get(2, 'c'), v('c5', 6_000)],
      ];
      expect(await reference!.ask(expected.map(([p]) => p))).toEqual(expected.map(([, a]) => a));
    });

    for (const scope of SCOPES) {
      it(`a ${scope} store answers every probe like Kafka Streams`, () =>
        expectSameAnswers(scope, [...phaseOne, ...phaseTwo], 'after restart'));
    }
  });
});
