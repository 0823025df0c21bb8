/**
 * The coordinated-generations scenario, shared by the single-node integration test and the multi-node fault test:
 * three worker processes, a reload started on one of them mid-load (the pipeline paused first, so that the build
 * cannot finish before every worker's consumer is in its group) and joined by all, the pipeline resumed and another
 * worker killed -9 at once, during the build (the survivors take its partitions and finish), the switch followed by
 * the survivors, `rollback --to 1` twice, the keep time expiring (the previous table dropped only once no live worker
 * writes it), then more records into generation 1. Every check that could fail is here.
 */
import { execFile } from 'child_process';
import * as path from 'path';
import { Client } from 'cassandra-driver';
import { AdjunctError } from '../../../src/errors';
import { Generations, StoreCatalog, WorkerRegistry } from '../../../src/generations';
import { readTopic } from '../helpers';
import { committedOffsets, eventually, names, pipelineGroup, StackFixture, waitCaughtUp, writeConfigFile } from './harness';
import { killWorker, WorkerProcess } from './processes';
import { expectTableEqualsReference, FAULT_RETENTION, genRecords, note, produceAll, totalOf, waitOutput } from '../../faults/lib';

const ROOT = path.resolve(__dirname, '../../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

/** Runs the CLI (`tsx src/cli/main.ts ...args`); resolves with its exit code and output. */
export function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
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
export function workerIdOf(w: WorkerProcess): string {
  const m = /"workerId":"([^"]+)"[^\n]*worker running|worker running[^\n]*"workerId":"([^"]+)"/.exec(w.output());
  if (!m) throw new Error(`no worker id in output: ${w.output().slice(-500)}`);
  return m[1] ?? m[2];
}

/** Log lines that would mean a table vanished under a writer or a worker failed (none may appear). */
export const WRITE_TROUBLE = /unconfigured table|does not exist|TABLE_MISSING|GENERATION_RETIRED|worker failed/;

/** How one stack runs the scenario. */
export interface GenerationsScenario {
  prefix: string;
  records: number;
  keys: number;
  /** Creates the source topic (replicated on a ring). */
  createTopic(n: ReturnType<typeof names>): Promise<void>;
  /** Prepares the keyspace before the first worker (a ring creates it replicated up front). */
  prepareKeyspace?(n: ReturnType<typeof names>): Promise<void>;
  /** The worker config document for these names and pipelines. */
  workerDoc(n: ReturnType<typeof names>, pipelines: object[]): Record<string, unknown>;
  /** The client the final checks read with (default: the stack's). */
  reader?: Client;
}

/** What the scenario measured, for the report. */
export interface GenerationsOutcome {
  g2Versions: number;
  g1Versions: number;
  records: number;
  deadLetters: number;
  /** Store write retries on worker A (timeouts of a loaded node; never a missing table, which is asserted). */
  writeRetriesOfA: number;
  dropWatch: string;
  ms: { switch: number; drop: number; total: number };
}

/** Runs the scenario on `stack`; fails on the first broken expectation. */
export async function runGenerationsScenario(stack: StackFixture, s: GenerationsScenario): Promise<GenerationsOutcome> {
  const t0 = Date.now();
  const n = names(s.prefix);
  await s.createTopic(n);
  await s.prepareKeyspace?.(n);
  const reader = s.reader ?? stack.client;
  const pipeline = {
    name: 'p',
    topics: [n.topic],
    store: { name: 's', historyRetention: FAULT_RETENTION },
    keepPreviousGeneration: '40s', // long enough for the generation-2 check before the rollback
    errors: { tolerance: 'all', deadLetterQueue: { topic: n.dlq } },
  };
  const doc = (http: boolean, port = 0) => {
    const d = s.workerDoc(n, [pipeline]);
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
  const apiWriters = async () =>
    (
      (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as {
        pipelines: { writers: { worker: string; generation: number }[] }[];
      }
    ).pipelines[0].writers;

  const a = stack.spawn(fileA, {}, true);
  await waitOutput(a, /worker running/); // A creates keyspace and catalog first
  const b = stack.spawn(file);
  const c = stack.spawn(file);
  await Promise.all([waitOutput(b, /worker running/), waitOutput(c, /worker running/)]);
  const ids = { a: workerIdOf(a), b: workerIdOf(b), c: workerIdOf(c) };

  // A load in 30 batches half a second apart; the reload starts on worker A when a third is sent and committed.
  const records = genRecords(s.records, s.keys);
  const producer = await stack.producer();
  let sent = 0;
  const load = produceAll(producer, n.topic, records, { batch: Math.ceil(records.length / 30), pauseMs: 500, onBatch: (x) => (sent = x) });
  await eventually(
    async () => sent >= records.length / 3 && totalOf(await committedOffsets(stack.admin, pipelineGroup(n.group, 'p', 1), n.topic)) > 0n,
    180_000,
    'load under way',
  );
  // The pipeline is paused first (on every worker within a poll: 3 polls are waited), so the build joined by all three
  // cannot reach READY before the kill below: every build task starts paused, and C's partitions of the build stay
  // unread until C resumes at its next poll, which comes after the kill.
  const admin = async (action: string) => (await fetch(`http://127.0.0.1:${port}/pipelines/p/${action}`, { method: 'POST' })).status;
  expect(await admin('pause')).toBe(200);
  await new Promise((r) => setTimeout(r, 1_500));
  const res = await fetch(`http://127.0.0.1:${port}/pipelines/p/reload`, { method: 'POST' });
  expect({ status: res.status, body: await res.json() }).toMatchObject({ status: 202, body: { building: 2 } });
  // The build is begun in the catalog before the reply. (Checked here, not after every worker joined: the build can reach
  // READY, the end offsets seen at its start, and switch before the last worker's heartbeat shows generation 2.)
  expect((await catalog.get('s'))?.buildingGeneration).toBe(2);

  // Every worker joins the build (heartbeat rows for generation 2 from all three), then C dies by kill -9 mid-build.
  await eventually(
    async () => {
      const building = (await registry.live('p')).filter((w) => w.generation === 2).map((w) => w.worker);
      return [ids.a, ids.b, ids.c].every((id) => building.includes(id));
    },
    60_000,
    'every worker building generation 2',
  );
  // A's /status lists all three writers of generation 2 (as of its last catalog poll).
  await eventually(
    async () => {
      const of2 = (await apiWriters()).filter((w) => w.generation === 2).map((w) => w.worker);
      return [ids.a, ids.b, ids.c].every((id) => of2.includes(id));
    },
    30_000,
    '/status writers of generation 2',
  );
  // All three build consumers are members of the build's group (C owns a share of its partitions, paused).
  await eventually(
    async () => (await stack.admin.describeGroups([pipelineGroup(n.group, 'p', 2)])).groups[0]?.members.length === 3,
    60_000,
    "three members in the build's consumer group",
  );
  // Resumed (A at once, B and C at their next poll), and C killed -9 straight after: the build is under way on A and
  // cannot have switched, since C's share of it is unread until the group drops C. Checked after the kill, not assumed.
  expect(await admin('resume')).toBe(200);
  await killWorker(c, 'SIGKILL');
  const killedAt = Date.now();
  expect(await catalog.get('s')).toMatchObject({ currentGeneration: 1, buildingGeneration: 2 });
  note('worker C killed -9 during the build');

  // The build completes on A and B; after the switch both write only generation 2.
  await eventually(async () => (await catalog.get('s'))?.currentGeneration === 2, 300_000, 'switch to generation 2');
  const switchMs = Date.now() - killedAt;
  await eventually(
    async () => {
      const live = await registry.live('p');
      return (
        live.every((w) => w.worker === ids.c || w.generation === 2) &&
        [ids.a, ids.b].every((id) => live.some((w) => w.worker === id && w.generation === 2))
      );
    },
    60_000,
    'A and B write generation 2 only',
  );
  await load;
  await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', 2), n.topic, 300_000);
  const g2 = await expectTableEqualsReference(stack.kafka, stack.admin, reader, n.topic, n.keyspace, 's_g2');

  // Rollback to generation 1 from the CLI, straight in the catalog; the same target again changes nothing.
  const rb = await runCli(['rollback', 'p', '--to', '1', '-c', file, '--catalog', '--json']);
  expect({ code: rb.code, stderr: rb.stderr, out: rb.code === 0 ? '' : rb.stdout }).toEqual({ code: 0, stderr: '', out: '' });
  expect(JSON.parse(rb.stdout)).toMatchObject({ current: 1, previous: 2, changed: true });
  const again = await runCli(['rollback', 'p', '--to', '1', '-c', file, '--catalog', '--json']);
  expect(JSON.parse(again.stdout)).toMatchObject({ current: 1, previous: 2, changed: false });
  expect((await catalog.get('s'))?.currentGeneration).toBe(1);
  const rolledBackAt = Date.now();

  // A lagging writer of generation 2 (a probe through the production protocol) registers while 2 is the kept previous
  // generation and renews its heartbeat until the janitor marks 2 dropping at the end of the keep time (40 s): then
  // its renewal is refused (GENERATION_RETIRED), and the table stays as long as its heartbeat row lives.
  const gens = new Generations(stack.client, n.keyspace, 500);
  const probe = { pipeline: 'p', store: 's', worker: 'probe', generation: 2, role: 'current' as const };
  await gens.register(probe);
  const renew = () =>
    gens.register(probe).then(
      () => 'registered',
      (e: unknown) => {
        if (e instanceof AdjunctError && e.code === 'GENERATION_RETIRED') return 'refused';
        throw e;
      },
    );
  await eventually(async () => (await renew()) === 'refused', 120_000, 'the probe refused once generation 2 is marked dropping');
  expect(await catalog.get('s')).toMatchObject({ previousGeneration: null, droppingGeneration: 2 });
  const probeHeld: boolean[] = [];
  for (let i = 0; i < 6; i++) {
    await new Promise((r) => setTimeout(r, 500));
    expect(await renew()).toBe('refused'); // the refused renewal still refreshed the row: the table is kept meanwhile
    probeHeld.push(await tableExists('s_g2'));
  }
  expect(probeHeld).toEqual(Array(6).fill(true));
  await gens.forget('p', 'probe', 2); // the probe stops writing: now the janitor may drop

  // The drop, watched: never while a heartbeat row names generation 2. Recorded, not thrown (eventually() would
  // swallow a throw and poll on).
  const seen: string[] = [];
  const droppedUnderWriter: string[] = [];
  await eventually(
    async () => {
      const writersOf2 = (await registry.live('p')).filter((w) => w.generation === 2).map((w) => w.worker);
      const exists = await tableExists('s_g2');
      const e = await catalog.get('s');
      seen.push(`${exists ? 'table' : 'dropped'}${e?.droppingGeneration === 2 ? '(dropping)' : ''}:${writersOf2.join('+')}`);
      if (!exists && writersOf2.length > 0) droppedUnderWriter.push(writersOf2.join('+'));
      return !exists && e?.droppingGeneration === null;
    },
    120_000,
    'generation 2 dropped after its keep time',
  );
  const dropMs = Date.now() - rolledBackAt;
  const dropWatch = seen.filter((x, i) => x !== seen[i - 1]).join(' → ');
  note(`drop watch: ${dropWatch}`);
  expect(droppedUnderWriter).toEqual([]);
  const after = await catalog.get('s');
  expect(after).toMatchObject({ currentGeneration: 1, previousGeneration: null, droppingGeneration: null, lastGeneration: 2 });
  // A rollback to the dropped generation is refused.
  const back = await runCli(['rollback', 'p', '--to', '2', '-c', file, '--catalog', '--json']);
  expect(back.code).not.toBe(0);

  // New records after the drop still flow into generation 1, which equals the reference of the whole topic.
  await produceAll(producer, n.topic, genRecords(Math.ceil(s.records / 15), s.keys), { batch: 500 });
  await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', 1), n.topic, 300_000);
  const g1 = await expectTableEqualsReference(stack.kafka, stack.admin, reader, n.topic, n.keyspace, 's_g1');
  note(`generation 1 after rollback: ${g1.records} records, ${g1.actualVersions} versions, equal to the reference`);

  // Each live worker's generation: 1 for A and B, from `adjunct status` (catalog) and from A's /status.
  const st = await runCli(['status', '-c', file, '--json']);
  expect(st.code).toBe(0);
  const byWorker = (list: { worker: string; generation: number }[]) =>
    Object.fromEntries(list.filter((w) => w.worker !== ids.c).map((w) => [w.worker, w.generation]));
  expect(byWorker((JSON.parse(st.stdout) as { workers: { worker: string; generation: number }[] }).workers)).toEqual({
    [ids.a]: 1,
    [ids.b]: 1,
  });
  const sorted = (o: Record<string, number>) => JSON.stringify(Object.entries(o).sort());
  const want = { [ids.a]: 1, [ids.b]: 1 };
  await eventually(async () => sorted(byWorker(await apiWriters())) === sorted(want), 10_000, `/status writers ${sorted(want)}`);

  // Nothing dead-lettered: the DLQ topic read completely holds exactly 0 records.
  const dead = await readTopic(stack.kafka, stack.admin, n.dlq);
  expect(dead.length).toBe(0);
  expect((await stack.admin.fetchTopicOffsets(n.dlq)).map((o) => o.high).every((h) => h === '0')).toBe(true);
  // No write found its table gone (TABLE_MISSING, `unconfigured table`), no registration was refused, A and B alive.
  // Retries of other Cassandra failures (timeouts on a loaded node) are infrastructure hiccups: counted and reported.
  for (const w of [a, b]) {
    const trouble = w
      .output()
      .split('\n')
      .filter((l) => WRITE_TROUBLE.test(l));
    if (trouble.length) {
      const first = /"time":(\d+)/.exec(trouble[0])?.[1];
      note(
        `${trouble.length} trouble lines, the first ${first ? Number(first) - rolledBackAt : '?'} ms after the rollback: ${trouble[0].slice(0, 400)}`,
      );
    }
  }
  for (const w of [a, b]) {
    expect(w.child.exitCode).toBeNull();
    expect(
      w
        .output()
        .split('\n')
        .filter((l) => WRITE_TROUBLE.test(l)),
    ).toEqual([]);
  }
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const writeRetriesOfA = metrics
    .split('\n')
    .filter((l) => /^adjunct_retries_total\{[^}]*stage="write"/.test(l))
    .reduce((t, l) => t + Number(l.split(' ').pop()), 0);
  const retried = [
    ...new Set(
      [a, b]
        .flatMap((w) =>
          w
            .output()
            .split('\n')
            .filter((l) => /Cassandra failure/.test(l)),
        )
        .map((l) => /"err":"([^"]{0,160})/.exec(l)?.[1] ?? l.slice(0, 160)),
    ),
  ];
  if (retried.length) note(`write retries (A: ${writeRetriesOfA}), causes: ${retried.slice(0, 3).join(' | ')}`);
  await Promise.all([killWorker(a, 'SIGTERM'), killWorker(b, 'SIGTERM')]);
  return {
    g2Versions: g2.actualVersions,
    g1Versions: g1.actualVersions,
    records: g1.records,
    deadLetters: dead.length,
    writeRetriesOfA,
    dropWatch,
    ms: { switch: switchMs, drop: dropMs, total: Date.now() - t0 },
  };
}
