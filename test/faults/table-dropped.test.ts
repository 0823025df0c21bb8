/**
 * The store's current table dropped outside adjunct (an operator's `DROP TABLE`), under a running worker and while the
 * worker is stopped. Before, the writes were logged as "no Cassandra host answered" and retried for ever, and a
 * restart (or any writer re-opening) re-created the table empty under the committed offsets: readers then took a
 * partial store for a whole one. Now the worker names the lost table, never re-creates it, and rebuilds the store as
 * a new generation from the earliest offsets; readers switch to it once READY and it equals the reference.
 */
import { createTopic } from '../integration/helpers';
import { names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
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

  /** The rebuilt generation becomes current, equals the reference, and the lookup reads it. */
  async function expectRebuilt(n: ReturnType<typeof names>, w: ReturnType<typeof stack.spawn>) {
    await waitOutput(w, /STORE TABLE LOST/, 60_000).catch((e) => {
      note(w.output().slice(-6000));
      throw e;
    });
    expect(w.output()).toMatch(/"generation":1,"store":"s"/);
    await waitOutput(w, /reload complete: store switched to the new generation/, 120_000);
    expect(await tableExists(n.keyspace, 's_g1')).toBe(false); // never re-created empty
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', 2), n.topic, 120_000);
    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g2');
    note(`generation 2 equals the reference: ${diff.actualVersions} versions of ${diff.records} records`);
    const lookup = await openLookup({ client: stack.client, keyspace: n.keyspace, generationCacheMs: 0 });
    try {
      expect((await lookup.store('s').info()).generation).toBe(2);
    } finally {
      await lookup.close();
    }
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
});
