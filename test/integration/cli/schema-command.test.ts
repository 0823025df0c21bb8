import { openLookup } from '../../../src/lookup';
import { createTopic } from '../helpers';
import { configDoc, eventually, names, startWorker, useStack, waitCaughtUp, writeConfigFile, pipelineGroup } from '../worker/harness';
import { runCli } from '../worker/generations-scenario';

jest.setTimeout(180_000);

// `adjunct schema`: an operator applies the schema ahead of the workers; a worker started afterwards uses it as it is
// (no rebuild, same generation), a second run changes nothing, and a colliding store is refused before any write.

describe('adjunct schema (real Cassandra and Kafka)', () => {
  const stack = useStack();

  it('creates the catalog and store tables; a worker started afterwards writes into them; a rerun is a no-op', async () => {
    const n = names('schema');
    await createTopic(stack.kafka, n.topic, 2);
    const doc = configDoc(n.keyspace, n.group, [{ name: 'rates', topics: [n.topic], store: { name: 'rates' } }]);
    const file = writeConfigFile(doc);

    const first = await runCli(['schema', '-c', file, '--json']);
    expect(first).toMatchObject({ code: 0 });
    const applied = JSON.parse(first.stdout) as {
      keyspace: string;
      stores: { pipeline: string; store: string; table: string; generation: number; state: string }[];
    };
    expect(applied).toEqual({
      keyspace: n.keyspace,
      stores: [{ pipeline: 'rates', store: 'rates', table: 'rates_g1', generation: 1, state: 'ready' }],
    });
    const tables = async () =>
      (
        await stack.client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?', [n.keyspace], { prepare: true })
      ).rows
        .map((r) => r.get('table_name') as string)
        .sort();
    const created = await tables();
    expect(created).toEqual(
      expect.arrayContaining(['adjunct_stores', 'adjunct_pipeline_status', 'adjunct_table_owners', 'adjunct_stream_time', 'rates_g1']),
    );

    // Nothing to change the second time: same answer, same tables.
    const again = await runCli(['schema', '-c', file, '--json']);
    expect(again).toMatchObject({ code: 0 });
    expect(JSON.parse(again.stdout)).toEqual(applied);
    expect(await tables()).toEqual(created);

    // A worker of the same group starts on the applied schema: generation 1, no new table, records land in rates_g1.
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'EUR', value: JSON.stringify({ rate: 1 }), timestamp: '1000', partition: 0 },
        { key: 'EUR', value: JSON.stringify({ rate: 2 }), timestamp: '2000', partition: 0 },
        { key: 'GBP', value: JSON.stringify({ rate: 3 }), timestamp: '1500', partition: 1 },
      ],
    });
    stack.worker = await startWorker(doc);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);
    const lookup = await openLookup({ client: stack.client, keyspace: n.keyspace });
    try {
      const store = lookup.store<string, { rate: number }>('rates');
      expect((await store.info()).table).toBe('rates_g1');
      await eventually(async () => (await store.get('EUR', 1999))?.value.rate === 1, 30_000, 'EUR as of 1999');
      expect(await store.get('EUR', 2500)).toMatchObject({ value: { rate: 2 }, timestamp: 2000 });
      expect(await store.get('GBP', 1500)).toMatchObject({ value: { rate: 3 }, timestamp: 1500 });
    } finally {
      await lookup.close();
    }
    expect(await tables()).toEqual(created);

    // The current table dropped outside adjunct: the schema command reports it lost and does not re-create it empty.
    await stack.worker.stop();
    stack.worker = undefined;
    await stack.client.execute(`DROP TABLE ${n.keyspace}.rates_g1`);
    const afterDrop = await runCli(['schema', '-c', file, '--json']);
    expect(afterDrop).toMatchObject({ code: 0 });
    expect(JSON.parse(afterDrop.stdout).stores).toEqual([
      { pipeline: 'rates', store: 'rates', table: 'rates_g1', generation: 1, state: 'lost' },
    ]);
    expect(afterDrop.stderr).toMatch(/table rates_g1 of the current generation is gone .* not re-created empty/);
    expect(await tables()).not.toContain('rates_g1');
  });

  it('with cassandra.autoCreate false it creates no keyspace: a missing one is KEYSPACE_NOT_FOUND and nothing is created', async () => {
    const n = names('schema_noks');
    const doc = configDoc(n.keyspace, n.group, [{ name: 'rates', topics: [n.topic], store: { name: 'rates' } }]);
    (doc.cassandra as Record<string, unknown>).autoCreate = false;
    const refused = await runCli(['schema', '-c', writeConfigFile(doc), '--json']);
    expect(refused.code).not.toBe(0);
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: 'KEYSPACE_NOT_FOUND' });
    const ks = await stack.client.execute('SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?', [n.keyspace], {
      prepare: true,
    });
    expect(ks.rowLength).toBe(0);
  });

  it('refuses a store whose tables another worker group owns (TABLE_OWNED, config exit code), before writing its catalog entry', async () => {
    const n = names('schema_own');
    const owner = writeConfigFile(configDoc(n.keyspace, n.group, [{ name: 'rates', topics: [n.topic], store: { name: 'rates' } }]));
    expect(await runCli(['schema', '-c', owner])).toMatchObject({ code: 0 });
    const other = writeConfigFile(configDoc(n.keyspace, `${n.group}_other`, [{ name: 'fx', topics: [n.topic], store: { name: 'rates' } }]));
    const refused = await runCli(['schema', '-c', other, '--json']);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: 'TABLE_OWNED', exitCode: 2 });
    expect(JSON.parse(refused.stdout).message).toContain(`worker group "${n.group}"`);
    const entry = await stack.client.execute(`SELECT store, base_table FROM ${n.keyspace}.adjunct_stores`);
    expect(entry.rows.map((r) => r.get('store'))).toEqual(['rates']);
  });
});
