import { Client } from 'cassandra-driver';
import { PipelineStatusTable } from '../../../src/catalog';
import { StoreCatalog } from '../../../src/generations';
import { createTopic } from '../helpers';
import {
  committedOffsets,
  configDoc,
  endOffsets,
  eventually,
  names,
  pipelineGroup,
  startWorker,
  waitCaughtUp,
  writeConfigFile,
} from './harness';
import { useStack } from './harness';
import { killWorker } from './processes';

const recs = (from: number, to: number, prefix = 'k') =>
  Array.from({ length: to - from }, (_, j) => ({
    key: `${prefix}${from + j}`,
    value: JSON.stringify({ i: from + j }),
    timestamp: String(1_000_000 + from + j),
  }));

async function count(client: Client, keyspace: string, table: string): Promise<number> {
  const rs = await client.execute(`SELECT key FROM ${keyspace}.${table}`, [], { fetchSize: 100_000 });
  return rs.rowLength;
}

async function keys(client: Client, keyspace: string, table: string): Promise<Set<string>> {
  const rs = await client.execute(`SELECT key, value FROM ${keyspace}.${table}`, [], { fetchSize: 100_000 });
  return new Set(rs.rows.filter((r) => r.get('value') !== null).map((r) => (r.get('key') as Buffer).toString()));
}

async function tableExists(client: Client, keyspace: string, table: string): Promise<boolean> {
  const rs = await client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name=? AND table_name=?', [keyspace, table]);
  return rs.rowLength > 0;
}

describe('bootstrap, reload, rollback and offset reset (real Kafka + Cassandra)', () => {
  const stack = useStack();

  it('bootstrap is READY only after the end offsets captured at start, while records keep arriving; dependents wait for it', async () => {
    const n = names('boot');
    const streamTopic = n.topic + '-tx';
    await createTopic(stack.kafka, n.topic, 3);
    await createTopic(stack.kafka, streamTopic, 1);
    const producer = await stack.producer();
    for (let b = 0; b < 8; b++) await producer.send({ topic: n.topic, messages: recs(b * 2500, (b + 1) * 2500) });
    await producer.send({ topic: streamTopic, messages: recs(0, 50, 'tx') });
    const before = await endOffsets(stack.admin, n.topic);
    let stopProducing = false;
    let extra = 20_000;
    const background = (async () => {
      while (!stopProducing) {
        await producer.send({ topic: n.topic, messages: recs(extra, extra + 200) });
        extra += 200;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const status = new PipelineStatusTable(stack.client, n.keyspace);
    const startP = startWorker(
      configDoc(n.keyspace, n.group, [
        { name: 'rates', topics: [n.topic], store: { name: 'rates', historyRetention: '7d' }, bootstrap: true },
        { name: 'tx', topics: [streamTopic], store: { name: 'tx', historyRetention: '7d' }, dependsOn: ['rates'] },
      ]),
    );
    stack.worker = await startP;
    // While BOOTSTRAPPING (seen through Cassandra, as another process would), the dependent pipeline wrote nothing.
    // Samples are asserted after the wait: `eventually` retries on a throw, so an expect inside it could never fail.
    const whileBootstrapping: { total: number; txRows: number; row: string }[] = [];
    const row = await eventually(
      async () => {
        const r = await status.get('rates');
        if (r?.state === 'BOOTSTRAPPING')
          whileBootstrapping.push({
            total: r.recordsTotal,
            txRows: await count(stack.client, n.keyspace, 'tx_g1').catch(() => 0),
            row: JSON.stringify(r),
          });
        return r?.state === 'READY' ? r : undefined;
      },
      120_000,
      'rates READY',
    );
    stopProducing = true;
    await background;
    expect(whileBootstrapping.length).toBeGreaterThan(0);
    // The whole backlog counts in every sample (the row is printed when one does not).
    expect(whileBootstrapping.filter((sample) => sample.total < 20_000).map((sample) => sample.row)).toEqual([]);
    expect(whileBootstrapping.map((sample) => sample.txRows)).toEqual(whileBootstrapping.map(() => 0));
    // READY only once committed offsets reached the captured end offsets (which cover everything produced before start).
    const committed = await committedOffsets(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);
    for (const [p, end] of before) {
      const captured = BigInt(row.endOffsets[`${n.topic}/${p}`]);
      expect(captured).toBeGreaterThanOrEqual(end);
      expect(committed.get(p)!).toBeGreaterThanOrEqual(captured);
    }
    expect(row.recordsDone).toBe(row.recordsTotal);
    // Then the dependent pipeline runs.
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'tx'), streamTopic);
    expect(await count(stack.client, n.keyspace, 'tx_g1')).toBe(50);
    expect(stack.worker.isReady()).toBe(true);
  });

  it('reload builds a new generation while readers stay on the old one, switches atomically, rolls back, and drops the old table after its keep time', async () => {
    const n = names('reload');
    await createTopic(stack.kafka, n.topic, 2);
    const producer = await stack.producer();
    await producer.send({ topic: n.topic, messages: recs(0, 20).map((m) => ({ ...m, partition: 0 })) });
    await producer.send({ topic: n.topic, messages: recs(20, 40).map((m) => ({ ...m, partition: 1 })) });
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [
        { name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' }, keepPreviousGeneration: '3s' },
      ]),
    );
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic);
    expect((await keys(stack.client, n.keyspace, 's_g1')).size).toBe(40);
    // Keys k0..k9 are deleted upstream: their records fall off the log (retention / delete-records).
    await stack.admin.deleteTopicRecords({ topic: n.topic, partitions: [{ partition: 0, offset: '10' }] });
    const catalog = new StoreCatalog(stack.client, n.keyspace);
    const generation = await stack.worker.runner('p').reload();
    expect(generation).toBe(2);
    const during = await catalog.get('s');
    expect(during?.currentGeneration).toBe(1); // readers still on the complete generation
    expect(during?.buildingGeneration).toBe(2);
    await eventually(async () => (await catalog.get('s'))?.currentGeneration === 2, 60_000, 'switch to generation 2');
    const g2 = await keys(stack.client, n.keyspace, 's_g2');
    expect(g2.size).toBe(30);
    expect(g2.has('k3')).toBe(false); // gone upstream, gone from the new generation
    expect((await keys(stack.client, n.keyspace, 's_g1')).has('k3')).toBe(true); // the old generation had it
    // New records flow into generation 2 after the switch.
    await producer.send({ topic: n.topic, messages: recs(100, 101) });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', 2), n.topic);
    expect((await keys(stack.client, n.keyspace, 's_g2')).has('k100')).toBe(true);
    // Rollback: readers back on generation 1; generation 2 is kept, then dropped after keepPreviousGeneration.
    const r = await stack.worker.runner('p').rollback(1);
    expect(r).toEqual({ current: 1, previous: 2, changed: true });
    // Idempotent, not a toggle. The kept generation may already be expiring (short keep time): previous 2 or none.
    const again = await stack.worker.runner('p').rollback(1);
    expect(again).toMatchObject({ current: 1, changed: false });
    expect([2, null]).toContain(again.previous);
    expect((await catalog.get('s'))?.currentGeneration).toBe(1);
    await eventually(async () => !(await tableExists(stack.client, n.keyspace, 's_g2')), 30_000, 'generation 2 dropped');
    expect((await catalog.get('s'))?.previousGeneration).toBeNull();
  });

  it('offset out of range: fail, latest and reload policies', async () => {
    const n = names('oor');
    await createTopic(stack.kafka, n.topic, 1);
    const producer = await stack.producer();
    await producer.send({ topic: n.topic, messages: recs(0, 10) });
    const doc = (policy: string) =>
      configDoc(n.keyspace, n.group, [
        {
          name: 'p',
          topics: [n.topic],
          store: { name: 's', historyRetention: '7d' },
          onOffsetOutOfRange: policy,
          keepPreviousGeneration: '1h',
        },
      ]);
    stack.worker = await startWorker(doc('fail'));
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic);
    await stack.worker.stop();
    stack.worker = undefined;
    // The worker is down; records 10..29 arrive and 10..19 are deleted before it comes back.
    await producer.send({ topic: n.topic, messages: recs(10, 30) });
    await stack.admin.deleteTopicRecords({ topic: n.topic, partitions: [{ partition: 0, offset: '20' }] });
    await expect(startWorker(doc('fail'))).rejects.toThrow(
      /offsets 10\.\.19 \(10 records\) were deleted by retention.*onOffsetOutOfRange=fail/,
    );
    // latest: goes on from the log start, loudly; the deleted 10..19 are lost, 20..29 (still in the log) are applied.
    stack.worker = await startWorker(doc('latest'));
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic);
    expect((await committedOffsets(stack.admin, pipelineGroup(n.group, 'p'), n.topic)).get(0)).toBe(30n);
    const afterLatest = await keys(stack.client, n.keyspace, 's_g1');
    expect(afterLatest.has('k25')).toBe(true);
    expect(afterLatest.has('k15')).toBe(false);
    await stack.worker.stop();
    // reload: provoke again, and the store is rebuilt from what the log still has.
    await producer.send({ topic: n.topic, messages: recs(30, 40) });
    await stack.admin.deleteTopicRecords({ topic: n.topic, partitions: [{ partition: 0, offset: '35' }] });
    stack.worker = await startWorker(doc('reload'));
    const catalog = new StoreCatalog(stack.client, n.keyspace);
    await eventually(async () => (await catalog.get('s'))?.currentGeneration === 2, 60_000, 'reload switched');
    const g2 = await keys(stack.client, n.keyspace, 's_g2');
    expect([...g2].sort()).toEqual(['k35', 'k36', 'k37', 'k38', 'k39']);
  });

  it('a worker killed mid-reload resumes the reload and never switches to a half-built generation', async () => {
    const n = names('crashreload');
    await createTopic(stack.kafka, n.topic, 2);
    const producer = await stack.producer();
    for (let b = 0; b < 10; b++) await producer.send({ topic: n.topic, messages: recs(b * 3000, (b + 1) * 3000) });
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' } }]),
    );
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic, 180_000);
    await stack.worker.stop();
    stack.worker = undefined;
    // resetOffset: true rebuilds into a new generation on start; kill the process mid-build.
    // The rebuild writes one row at a time, so it lasts long enough (seconds, not the sub-second of a batched build)
    // for the test to see it in progress and kill it there.
    const slow = configDoc(n.keyspace, n.group, [
      { name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' }, resetOffset: true },
    ]);
    Object.assign(slow.worker as object, { maxInFlight: 1 });
    Object.assign(slow.cassandra as object, { writeBatch: { maxRows: 1, linger: 0 } });
    const file = writeConfigFile(slow);
    const catalog = new StoreCatalog(stack.client, n.keyspace);
    const status = new PipelineStatusTable(stack.client, n.keyspace);
    const w1 = stack.spawn(file);
    await eventually(
      async () => {
        const r = await status.get('p', 2);
        return r && r.state === 'BOOTSTRAPPING' && r.recordsDone > 0 && r.recordsDone < r.recordsTotal;
      },
      120_000,
      'reload in progress',
    );
    await killWorker(w1, 'SIGKILL');
    const mid = await catalog.get('s');
    expect(mid?.currentGeneration).toBe(1);
    expect(mid?.buildingGeneration).toBe(2);
    expect((await status.get('p', 2))?.state).toBe('BOOTSTRAPPING');
    // Restart: the same build resumes (generation 2, its own committed offsets) and switches only when complete.
    const w2 = stack.spawn(file);
    await eventually(async () => (await catalog.get('s'))?.currentGeneration === 2, 180_000, 'switch after resumed reload');
    expect((await status.get('p', 2))?.state).toBe('READY');
    expect(await count(stack.client, n.keyspace, 's_g2')).toBe(30_000);
    await killWorker(w2, 'SIGTERM');
  }, 300_000);
});
