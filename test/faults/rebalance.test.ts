/**
 * Three worker processes in one group: two start, a third joins mid-load and one of the first leaves (SIGTERM)
 * mid-load; partitions move twice under load, and the final table equals the reference (partitioned scope).
 */
import { createTopic } from '../integration/helpers';
import { eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { killWorker } from '../integration/worker/processes';
import {
  expectTableEqualsReference,
  FAULT_RETENTION,
  genRecords,
  note,
  produceAll,
  PROFILE,
  SIZES,
  useFaultStack,
  waitOutput,
  workerDoc,
} from './lib';

describe(`fault: rebalances under load (${PROFILE} profile)`, () => {
  const stack = useFaultStack();

  const members = async (group: string) => (await stack.admin.describeGroups([group])).groups[0]?.members.length ?? 0;

  it('a member joins and a member leaves mid-load: nothing lost, nothing wrong', async () => {
    const size = SIZES.rebalance;
    const n = names('rebal');
    await createTopic(stack.kafka, n.topic, size.partitions);
    const t0 = Date.now();
    const file = writeConfigFile(
      workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', scope: 'partitioned', historyRetention: FAULT_RETENTION } }]),
    );
    const group = pipelineGroup(n.group, 'p');
    const a = stack.spawn(file);
    const b = stack.spawn(file);
    await waitOutput(a, /worker running/);
    await waitOutput(b, /worker running/);
    await eventually(async () => (await members(group)) === 2, 60_000, 'two members');

    const records = genRecords(size.records, size.keys);
    const producer = await stack.producer();
    const batch = Math.ceil(records.length / 40);
    let sent = 0;
    const load = produceAll(producer, n.topic, records, { batch, pauseMs: 1000, onBatch: (s) => (sent = s) });

    await eventually(async () => sent >= records.length / 4, 120_000, 'a quarter of the load');
    const c = stack.spawn(file);
    await waitOutput(c, /worker running/);
    await eventually(async () => (await members(group)) === 3, 60_000, 'three members');
    note(`third member joined at ${sent}/${records.length} produced`);

    await eventually(async () => sent >= (records.length * 3) / 5, 120_000, 'three fifths of the load');
    a.child.kill('SIGTERM');
    const exitA = await a.exited;
    note(`first member left (exit ${exitA.code}) at ${sent}/${records.length} produced`);
    expect(exitA.code).toBe(0);
    await eventually(async () => (await members(group)) === 2, 60_000, 'two members again');

    await load;
    await waitCaughtUp(stack.admin, group, n.topic, 300_000);
    expect(b.child.exitCode).toBeNull();
    expect(c.child.exitCode).toBeNull();
    await Promise.all([killWorker(b, 'SIGTERM'), killWorker(c, 'SIGTERM')]);
    expect((await b.exited).code).toBe(0);
    expect((await c.exited).code).toBe(0);

    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g1');
    note(
      `rebalance: ${diff.records} records, ${size.partitions} partitions, ${diff.expectedVersions} versions expected, ${diff.actualVersions} in Cassandra, ${diff.notPut} puts beyond grace, ${Date.now() - t0} ms total`,
    );
  });
});
