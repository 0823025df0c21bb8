/**
 * The schema registry frozen (SIGSTOP) for 25 s while Avro records arrive whose schema id the worker has not fetched
 * yet, under `tolerance: all` with a DLQ: an outage is never a bad record. Each registry request gives up after 10 s
 * (REGISTRY_UNAVAILABLE, retried), so the pipeline stalls visibly instead of hanging on a request that never returns:
 * no commit past the first record it cannot decode, nothing dead-lettered; after the resume it stores every record.
 * (The stack's registry keeps its schemas in memory: a killed one would come back without them.)
 */
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { Message } from 'kafkajs';
import { createTopic, newRegistry } from '../integration/helpers';
import { committedOffsets, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { killWorker } from '../integration/worker/processes';
import { FAULT_RETENTION, note, pauseService, totalOf, useFaultStack, waitOutput, workerDoc } from './lib';

const ROW = { type: 'record', name: 'Row', namespace: 'adjunct.faults', fields: [{ name: 'v', type: 'int' }] };
/** The second version adds a field with a default (backward compatible): a new schema id the worker has never seen. */
const ROW_V2 = { ...ROW, fields: [...ROW.fields, { name: 'note', type: 'string', default: '' }] };

/** How long the registry stays frozen. */
const FROZEN_MS = 25_000;

describe('fault: schema registry frozen with undecoded schema ids arriving (tolerance all)', () => {
  const stack = useFaultStack();

  it('stalls instead of dead-lettering, then stores every record once the registry is back', async () => {
    const n = names('regout');
    await createTopic(stack.kafka, n.topic, 1);
    await createTopic(stack.kafka, n.dlq, 1);
    const registry = newRegistry();
    const subject = `${n.topic}-value`;
    const { id: v1 } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(ROW) }, { subject });
    const { id: v2 } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(ROW_V2) }, { subject });
    // Every record its own key: the table must end with exactly one row per record.
    const t0 = Date.now() - 60_000;
    const batch = async (from: number, id: number): Promise<Message[]> =>
      Promise.all(
        Array.from({ length: 200 }, async (_, i) => ({
          key: `k${from + i}`,
          value: await registry.encode(id, id === v1 ? { v: from + i } : { v: from + i, note: 'second version' }),
          timestamp: String(t0 + from + i),
        })),
      );
    const first = await batch(0, v1);
    const second = await batch(200, v2); // encoded now: the registry will be frozen when they are sent

    const doc = workerDoc(n, [
      {
        name: 'p',
        topics: [n.topic],
        keyConverter: 'string',
        valueConverter: 'avro',
        store: { name: 's', historyRetention: FAULT_RETENTION },
        errors: { tolerance: 'all', deadLetterQueue: { topic: n.dlq }, retryTimeout: '5m', retryMaxDelay: '2s' },
      },
    ]);
    const w = stack.spawn(writeConfigFile(doc));
    await waitOutput(w, /worker running/);
    const producer = await stack.producer();
    await producer.send({ topic: n.topic, acks: -1, messages: first });
    const group = pipelineGroup(n.group, 'p');
    await waitCaughtUp(stack.admin, group, n.topic, 120_000);

    let stalledChecked = false;
    await pauseService('registry', FROZEN_MS, async () => {
      note(`sending 200 records of schema id ${v2}, never fetched by the worker`);
      await producer.send({ topic: n.topic, acks: -1, messages: second });
      // A request times out after 10 s: the first REGISTRY_UNAVAILABLE comes well inside the freeze.
      await waitOutput(w, /schema registry unavailable while fetching schema \d+/, FROZEN_MS - 5000);
      // Stalled: nothing committed past the first undecodable record, nothing dead-lettered, the worker alive.
      expect(totalOf(await committedOffsets(stack.admin, group, n.topic))).toBe(200n);
      expect((await stack.admin.fetchTopicOffsets(n.dlq)).map((o) => o.high)).toEqual(['0']);
      expect(w.child.exitCode).toBeNull();
      stalledChecked = true;
    });
    expect(stalledChecked).toBe(true);

    const resumedAt = Date.now();
    await waitCaughtUp(stack.admin, group, n.topic, 180_000);
    note(`caught up ${Date.now() - resumedAt} ms after the resume`);
    expect((await stack.admin.fetchTopicOffsets(n.dlq)).map((o) => o.high)).toEqual(['0']);
    const rows = await stack.client.execute(`SELECT key FROM ${n.keyspace}.s_g1`, [], { fetchSize: 10_000 });
    expect(rows.rowLength).toBe(400);
    expect(w.output()).not.toMatch(/worker failed|"state":"FAILED"/);
    await killWorker(w, 'SIGTERM');
    expect((await w.exited).code).toBe(0);
  });
});
