/**
 * Generations coordinated across worker processes: three workers, a reload started on one of them mid-load, which
 * every worker joins; another worker killed -9 during the build; the switch followed by every worker; a rollback to
 * the previous generation (idempotent); then the keep time expiring: the previous table is dropped only once no live
 * worker writes it, the current generation equals the in-memory reference and nothing was dead-lettered.
 */
import { execFile } from 'child_process';
import * as path from 'path';
import { createTopic } from '../helpers';
import { StoreCatalog, WorkerRegistry } from '../../../src/generations';
import { committedOffsets, eventually, names, pipelineGroup, useStack, waitCaughtUp, writeConfigFile } from './harness';
import { killWorker, WorkerProcess } from './processes';
import {
  expectTableEqualsReference,
  FAULT_RETENTION,
  genRecords,
  note,
  produceAll,
  totalOf,
  waitOutput,
  workerDoc,
} from '../../faults/lib';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '../../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

/** Runs the CLI (`tsx src/cli/main.ts ...args`); resolves with its exit code and stdout. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ['src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, ADJUNCT_LOG_LEVEL: 'silent' }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** The worker id a process logged with "worker running". */
function workerIdOf(w: WorkerProcess): string {
  const m = /"workerId":"([^"]+)"[^\n]*worker running|worker running[^\n]*"workerId":"([^"]+)"/.exec(w.output());
  if (!m) throw new Error(`no worker id in output: ${w.output().slice(-500)}`);
  return m[1] ?? m[2];
}

describe('generations followed by every worker', () => {
  const stack = useStack();

  it('reload joined by all, a worker killed -9 mid-build, switch, rollback --to, keep time: nothing lost, no table dropped under a writer', async () => {
    const n = names('gens');
    await createTopic(stack.kafka, n.topic, 4);
    const pipeline = {
      name: 'p',
      topics: [n.topic],
      store: { name: 's', historyRetention: FAULT_RETENTION },
      keepPreviousGeneration: '40s', // long enough for the generation-2 check before the rollback
      errors: { tolerance: 'all', deadLetterQueue: { topic: n.dlq } },
    };
    const doc = (http: boolean, port = 0) => {
      const d = workerDoc(n, [pipeline]);
      const worker = d.worker as Record<string, unknown>;
      worker.generationPoll = 500;
      if (http) worker.http = { enabled: true, host: '127.0.0.1', port };
      return d;
    };
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const fileA = writeConfigFile(doc(true, port));
    const file = writeConfigFile(doc(false));
    const catalog = new StoreCatalog(stack.client, n.keyspace);
    const registry = new WorkerRegistry(stack.client, n.keyspace);
    const tableExists = async (t: string) =>
      (
        await stack.client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name=? AND table_name=?', [n.keyspace, t], {
          prepare: true,
        })
      ).rowLength > 0;

    const a = stack.spawn(fileA, {}, true);
    await waitOutput(a, /worker running/); // A creates keyspace and catalog first
    const b = stack.spawn(file);
    const c = stack.spawn(file);
    await Promise.all([waitOutput(b, /worker running/), waitOutput(c, /worker running/)]);
    const ids = { a: workerIdOf(a), b: workerIdOf(b), c: workerIdOf(c) };

    // A load in 30 batches half a second apart; the reload starts on worker A when a third is sent and committed.
    const records = genRecords(30_000, 800);
    const producer = await stack.producer();
    let sent = 0;
    const load = produceAll(producer, n.topic, records, { batch: 1000, pauseMs: 500, onBatch: (x) => (sent = x) });
    await eventually(
      async () => sent >= records.length / 3 && totalOf(await committedOffsets(stack.admin, pipelineGroup(n.group, 'p', 1), n.topic)) > 0n,
      120_000,
      'load under way',
    );
    const res = await fetch(`http://127.0.0.1:${port}/pipelines/p/reload`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ building: 2 });

    // Every worker joins the build (heartbeat rows for generation 2 from all three), then C dies by kill -9 mid-build.
    await eventually(
      async () => {
        const building = (await registry.live('p')).filter((w) => w.generation === 2).map((w) => w.worker);
        return [ids.a, ids.b, ids.c].every((id) => building.includes(id));
      },
      30_000,
      'every worker building generation 2',
    );
    expect((await catalog.get('s'))?.buildingGeneration).toBe(2);
    await killWorker(c, 'SIGKILL');
    note('worker C killed -9 during the build');

    // The build completes on A and B; after the switch both write only generation 2.
    await eventually(async () => (await catalog.get('s'))?.currentGeneration === 2, 180_000, 'switch to generation 2');
    await eventually(
      async () => {
        const live = await registry.live('p');
        return (
          live.every((w) => w.worker === ids.c || w.generation === 2) &&
          [ids.a, ids.b].every((id) => live.some((w) => w.worker === id && w.generation === 2))
        );
      },
      30_000,
      'A and B write generation 2 only',
    );
    await load;
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', 2), n.topic, 180_000);
    await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g2');

    // Rollback to generation 1 from the CLI, straight in the catalog; the same target again changes nothing.
    const rb = await cli(['rollback', 'p', '--to', '1', '-c', file, '--catalog', '--json']);
    expect({ code: rb.code, stderr: rb.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(rb.stdout)).toMatchObject({ current: 1, previous: 2, changed: true });
    const again = await cli(['rollback', 'p', '--to', '1', '-c', file, '--catalog', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ current: 1, previous: 2, changed: false });
    expect((await catalog.get('s'))?.currentGeneration).toBe(1);

    // Keep time (40 s) expiring: generation 2 is dropped only once no live worker (nor C's expiring heartbeat) names it.
    const seen: string[] = [];
    const droppedUnderWriter: string[] = [];
    await eventually(
      async () => {
        const writersOf2 = (await registry.live('p')).filter((w) => w.generation === 2).map((w) => w.worker);
        const exists = await tableExists('s_g2');
        seen.push(`${exists ? 'table' : 'dropped'}:${writersOf2.join('+')}`);
        // Dropped: nobody may still write it. Recorded, not thrown (eventually() would swallow a throw and poll on).
        if (!exists && writersOf2.length > 0) droppedUnderWriter.push(writersOf2.join('+'));
        return !exists;
      },
      90_000,
      'generation 2 dropped after its keep time',
    );
    note(`drop watch: ${seen.filter((s, i) => s !== seen[i - 1]).join(' → ')}`);
    expect(droppedUnderWriter).toEqual([]);
    expect((await catalog.get('s'))?.previousGeneration).toBeNull();

    // New records after the drop still flow into generation 1, which equals the reference of the whole topic.
    await produceAll(producer, n.topic, genRecords(2_000, 800), { batch: 500 });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', 1), n.topic, 180_000);
    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g1');
    note(`generation 1 after rollback: ${diff.records} records, ${diff.actualVersions} versions, equal to the reference`);

    // Status from the catalog lists every live worker and the generation it writes.
    const st = await cli(['status', '-c', file, '--json']);
    expect(st.code).toBe(0);
    const workers = (JSON.parse(st.stdout) as { workers: { worker: string; generation: number }[] }).workers
      .filter((w) => w.generation === 1)
      .map((w) => w.worker);
    expect(workers).toEqual(expect.arrayContaining([ids.a, ids.b]));
    const apiStatus = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as {
      pipelines: { writers: { worker: string; generation: number }[] }[];
    };
    expect(apiStatus.pipelines[0].writers.map((w) => w.worker)).toEqual(expect.arrayContaining([ids.a, ids.b]));

    // Nothing dead-lettered, no write ever failed (a dropped table would show as retries), A and B alive.
    expect((await stack.admin.fetchTopicOffsets(n.dlq)).map((o) => o.high)).toEqual(['0']);
    for (const w of [a, b]) {
      expect(w.child.exitCode).toBeNull();
      expect(w.output()).not.toMatch(/Cassandra failure|unconfigured table|worker failed/);
    }
    await Promise.all([killWorker(a, 'SIGTERM'), killWorker(b, 'SIGTERM')]);
  });
});
