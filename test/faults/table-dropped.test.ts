/**
 * The store's current table dropped outside adjunct (an operator's `DROP TABLE`), under a running worker and while the
 * worker is stopped; and the table of a build in progress dropped while the worker is stopped mid-build (re-created
 * empty under the build group's offsets, that build would have switched readers to a partial store; it is replaced
 * by a build of a new number instead). Before, the writes were logged as "no Cassandra host answered" and retried for ever, and a
 * restart (or any writer re-opening) re-created the table empty under the committed offsets: readers then took a
 * partial store for a whole one. Now the worker names the lost table, never re-creates it, and rebuilds the store as
 * a new generation from the earliest offsets; readers switch to it once READY and it equals the reference.
 */
import { createTopic } from '../integration/helpers';
import { committedOffsets, eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { StoreCatalog } from '../../src/generations';
import { killWorker } from '../integration/worker/processes';
import { openLookup } from '../../src/lookup';
import { expectTableEqualsReference, FAULT_RETENTION, genRecords, note, produceAll, useFaultStack, waitOutput, workerDoc } from './lib';

describe('fault: the current store table dropped outside adjunct', () => {
  const stack = useFaultStack();

  async function setUp(prefix: string) {
    const n = names(prefix);
    await createTopic(stack.kafka, n.topic, 3);
    const records = genRecords(3000, 200);
    await produceAll(await stack.producer(), n.topic, records.slice(0, 2000));
    const file = writeConfigFile(workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: FAULT_RETENTION } }]));
    return { n, file, rest: records.slice(2000) };
  }

  const tableExists = async (keyspace: string, table: string) =>
    (
      await stack.client.execute(
        'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
        [keyspace, table],
        {
          prepare: true,
        },
      )
    ).rowLength > 0;

  /** Generation `generation` catches up, equals the reference, and readers of store `s` see it as current. */
  async function expectReadersOn(n: ReturnType<typeof names>, generation: number) {
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', generation), n.topic, 120_000);
    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, `s_g${generation}`);
    note(`generation ${generation} equals the reference: ${diff.actualVersions} versions of ${diff.records} records`);
    const lookup = await openLookup({ client: stack.client, keyspace: n.keyspace, generationCacheMs: 0 });
    try {
      expect((await lookup.store('s').info()).generation).toBe(generation);
    } finally {
      await lookup.close();
    }
  }

  /** The rebuilt generation becomes current, equals the reference, and the lookup reads it. */
  async function expectRebuilt(n: ReturnType<typeof names>, w: ReturnType<typeof stack.spawn>) {
    await waitOutput(w, /STORE TABLE LOST/, 60_000).catch((e) => {
      note(w.output().slice(-6000));
      throw e;
    });
    expect(w.output()).toMatch(/"generation":1,"store":"s"/);
    await waitOutput(w, /reload complete: store switched to the new generation/, 120_000);
    expect(await tableExists(n.keyspace, 's_g1')).toBe(false); // never re-created empty
    await expectReadersOn(n, 2);
    expect(w.child.exitCode).toBeNull();
  }

  it('under a running worker: named, not re-created, rebuilt as generation 2 equal to the reference', async () => {
    const { n, file, rest } = await setUp('tdrun');
    const w = stack.spawn(file);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic, 120_000);
    await stack.client.execute(`DROP TABLE ${n.keyspace}.s_g1`);
    await produceAll(await stack.producer(), n.topic, rest);
    await expectRebuilt(n, w);
  });

  it('while the worker is stopped: the restart does not re-create it empty under the committed offsets', async () => {
    const { n, file, rest } = await setUp('tdstop');
    const first = stack.spawn(file);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic, 120_000);
    await killWorker(first, 'SIGTERM');
    await stack.client.execute(`DROP TABLE ${n.keyspace}.s_g1`);
    await produceAll(await stack.producer(), n.topic, rest);
    const w = stack.spawn(file);
    await expectRebuilt(n, w);
  });

  it('a build table dropped while the worker is stopped mid-build: replaced by generation 3 equal to the reference, never re-created', async () => {
    const n = names('tdbuild');
    await createTopic(stack.kafka, n.topic, 3);
    await produceAll(await stack.producer(), n.topic, genRecords(9000, 300));
    const doc = workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: FAULT_RETENTION } }]);
    // One write at a time, unbatched: the build lasts long enough to be stopped in its middle.
    (doc.worker as Record<string, unknown>).maxInFlight = 1;
    (doc.cassandra as Record<string, unknown>).writeBatch = { linger: 0 };
    const file = writeConfigFile(doc);
    const first = stack.spawn(file);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic, 180_000);
    expect(await new StoreCatalog(stack.client, n.keyspace).beginBuild('s')).toBe(2); // a reload, as `adjunct reload --catalog`
    const g2 = pipelineGroup(n.group, 'p', 2);
    const committed = async () => [...(await committedOffsets(stack.admin, g2, n.topic)).values()].reduce((a, b) => a + b, 0n);
    await eventually(async () => (await committed()) > 0n, 60_000, 'the build committed some records');
    await killWorker(first, 'SIGKILL');
    const mid = await committed();
    note(`build of generation 2 stopped with ${mid} of 9000 records committed`);
    expect(mid).toBeLessThan(9000n);
    await stack.client.execute(`DROP TABLE ${n.keyspace}.s_g2`);
    const w = stack.spawn(file);
    await waitOutput(w, /BUILD TABLE LOST/, 60_000).catch((e) => {
      note(w.output().slice(-6000));
      throw e;
    });
    await waitOutput(w, /reload complete: store switched to the new generation/, 180_000);
    expect(w.output()).toMatch(/"generation":3,"previous":1/);
    expect(await tableExists(n.keyspace, 's_g2')).toBe(false); // never re-created under the group's offsets
    await expectReadersOn(n, 3);
    await killWorker(w, 'SIGTERM');
  });
});
