/**
 * kill -9 at random moments of a load: after every kill, everything below the committed offsets is in the store;
 * after the last restart the whole table equals the MemoryVersionedStore reference.
 */
import { randomInt } from 'crypto';
import { createTopic } from '../integration/helpers';
import { committedOffsets, eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { killWorker } from '../integration/worker/processes';
import { compareHistories, compareVersions, dumpTable, genRecords, note, produceAll, PROFILE, readTopic, referenceVersions, SIZES, totalOf, waitOutput, workerDoc } from './lib';

const RETENTION = 7 * 86_400_000;

import { useStack } from '../integration/worker/harness';

describe(`fault: kill -9 during a load (${PROFILE} profile)`, () => {
  const stack = useStack();

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
    const file = writeConfigFile(workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' } }]));
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
      await eventually(async () => totalOf(await committedOffsets(stack.admin, group, n.topic)) >= target || w.child.exitCode !== null, 240_000, `commit progress to ${target}`);
      expect(w.child.exitCode).toBeNull();
      await new Promise((r) => setTimeout(r, randomInt(0, 300)));
      await killWorker(w, 'SIGKILL');
      const committed = await committedOffsets(stack.admin, group, n.topic);
      killLog.push(`kill ${k + 1}: committed ${totalOf(committed)} / ${records.length} (${[...committed].map(([p, o]) => `${p}:${o}`).join(' ')})`);
      note(killLog[killLog.length - 1]);
      // Nothing committed may be missing: every record below the committed offsets has its version in the table.
      if (k === 0 || k === size.kills - 1 || PROFILE === 'ci') {
        const all = await readTopic(stack.kafka, stack.admin, n.topic);
        const below = all.filter((r) => r.offset < (committed.get(r.partition) ?? 0n));
        const table = await dumpTable(stack.client, n.keyspace, 's_g1');
        const missing = below.filter((r) => !table.get(r.key!.toString())?.has(r.timestamp));
        expect({ kill: k + 1, missing: missing.slice(0, 5).map((r) => `${r.partition}@${r.offset}`) }).toEqual({ kill: k + 1, missing: [] });
        checkedBelowCommits += below.length;
      }
    }
    // The first kill may land before any commit, but across all kills something below the commits was checked.
    expect(checkedBelowCommits).toBeGreaterThan(0);
    const last = stack.spawn(file);
    await waitCaughtUp(stack.admin, group, n.topic, 600_000);
    await waitOutput(last, /worker running/);
    await killWorker(last, 'SIGTERM');
    expect((await last.exited).code).toBe(0);

    const all = await readTopic(stack.kafka, stack.admin, n.topic);
    expect(all.length).toBe(records.length);
    const ref = await referenceVersions(all, RETENTION);
    const table = await dumpTable(stack.client, n.keyspace, 's_g1');
    const diff = compareVersions(table, ref.versions);
    note(`kill9: ${records.length} records, ${size.kills} kills, ${diff.expectedVersions} versions expected, ${diff.actualVersions} in Cassandra, ${Date.now() - t0} ms total`);
    expect(diff).toMatchObject({ missing: 0, extra: 0, wrong: 0, samples: [] });
    expect(diff.actualVersions).toBe(diff.expectedVersions);
    expect(await compareHistories(table, ref.stores)).toBe(0);
  });
});
