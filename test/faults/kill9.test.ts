/**
 * kill -9 at random moments of a load: after every kill, everything below the committed offsets is in the store;
 * after the last restart the whole table equals the MemoryVersionedStore reference.
 */
import { randomInt } from 'crypto';
import { createTopic } from '../integration/helpers';
import { committedOffsets, eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { killWorker } from '../integration/worker/processes';
import {
  checkBelowCommitted,
  expectTableEqualsReference,
  FAULT_RETENTION,
  genRecords,
  note,
  produceAll,
  PROFILE,
  SIZES,
  totalOf,
  useFaultStack,
  waitOutput,
  workerDoc,
} from './lib';

describe(`fault: kill -9 during a load (${PROFILE} profile)`, () => {
  const stack = useFaultStack();

  it('a worker killed -9 repeatedly and restarted loses nothing and writes nothing wrong', async () => {
    const size = SIZES.kill9;
    const n = names('kill9');
    await createTopic(stack.kafka, n.topic, size.partitions);
    const t0 = Date.now();
    const records = genRecords(size.records, size.keys);
    const producer = await stack.producer();
    await produceAll(producer, n.topic, records, { batch: 2000 });
    note(`produced ${records.length} records in ${Date.now() - t0} ms`);

    // A short session timeout so a restarted worker does not wait 30 s for the killed member to be evicted.
    const file = writeConfigFile(workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: FAULT_RETENTION } }]));
    const group = pipelineGroup(n.group, 'p');
    const killLog: string[] = [];
    let checkedBelowCommits = 0;
    const total = BigInt(records.length);
    for (let k = 0; k < size.kills; k++) {
      const w = stack.spawn(file);
      // Kill point: a random share of what is left for this run (0 = during start-up / group join), then a random delay.
      const now = totalOf(await committedOffsets(stack.admin, group, n.topic));
      const share = (total - now) / BigInt(size.kills - k + 1);
      const target = now + (share * BigInt(randomInt(0, 151))) / 100n;
      await eventually(
        async () => totalOf(await committedOffsets(stack.admin, group, n.topic)) >= target || w.child.exitCode !== null,
        240_000,
        `commit progress to ${target}`,
      );
      expect(w.child.exitCode).toBeNull();
      await new Promise((r) => setTimeout(r, randomInt(0, 300)));
      await killWorker(w, 'SIGKILL');
      const committed = await committedOffsets(stack.admin, group, n.topic);
      killLog.push(
        `kill ${k + 1}: committed ${totalOf(committed)} / ${records.length} (${[...committed].map(([p, o]) => `${p}:${o}`).join(' ')})`,
      );
      note(killLog[killLog.length - 1]);
      // Nothing committed may be missing: every record below the committed offsets that the versioned rules keep has
      // its version in the table, and each writer's stream time was persisted as of its committed offset.
      if (k === 0 || k === size.kills - 1 || PROFILE === 'ci') {
        const below = await checkBelowCommitted(stack.kafka, stack.admin, stack.client, n.topic, group, n.keyspace, 's_g1');
        expect({ kill: k + 1, missing: below.missing, streamTimeBehind: below.streamTimeBehind }).toEqual({
          kill: k + 1,
          missing: [],
          streamTimeBehind: [],
        });
        checkedBelowCommits += below.checked;
      }
    }
    // The first kill may land before any commit, but across all kills something below the commits was checked.
    expect(checkedBelowCommits).toBeGreaterThan(0);
    const last = stack.spawn(file);
    await waitCaughtUp(stack.admin, group, n.topic, 600_000);
    await waitOutput(last, /worker running/);
    await killWorker(last, 'SIGTERM');
    expect((await last.exited).code).toBe(0);

    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g1');
    expect(diff.records).toBe(records.length);
    note(
      `kill9: ${records.length} records, ${size.kills} kills, ${diff.expectedVersions} versions expected, ${diff.actualVersions} in Cassandra (${diff.cleaned} expired ones cleaned), ${diff.notPut} puts beyond grace, ${diff.tombstones} tombstones, ${Date.now() - t0} ms total`,
    );
  });
});
