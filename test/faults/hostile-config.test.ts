/**
 * Hostile configuration: CQL injection in names, keyspaces and table options, unknown keys and wrong types.
 * `adjunct validate` rejects what the YAML schema can see (exit 2, problems named by YAML path); table options that
 * pass the schema are rejected by the store's validator when the worker starts, before any store CQL is sent.
 */
import { spawn } from 'child_process';
import * as path from 'path';
import { Client } from 'cassandra-driver';
import { AdjunctConfigSchema } from '../../src/config';
import { silentLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';
import { Worker } from '../../src/worker/worker';
import { createTopic } from '../integration/helpers';
import { configDoc, names, writeConfigFile } from '../integration/worker/harness';
import { note, useFaultStack } from './lib';

const INJECT = "LeveledCompactionStrategy'}; DROP TABLE x; --";

/** Runs `adjunct validate` on a document; returns exit code and output. */
function validate(doc: Record<string, unknown>, json = false): Promise<{ code: number | null; out: string }> {
  const bin = path.resolve(__dirname, '../../bin/adjunct.js');
  const file = writeConfigFile(doc);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, 'validate', '--config', file, ...(json ? ['--json'] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d.toString()));
    child.stderr.on('data', (d) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

const pipeline = (store: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'p',
  topics: ['faults-hostile'],
  store: { name: 's', ...store },
  ...extra,
});

/** Worker.stop() races the drain against an un-cleared shutdownTimeout + 5 s timer: keep it short so jest exits. */
function shortStop(doc: Record<string, unknown>): Record<string, unknown> {
  (doc.worker as Record<string, unknown>).shutdownTimeout = 500;
  return doc;
}

async function keyspaceExists(client: Client, ks: string): Promise<boolean> {
  const rs = await client.execute('SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?', [ks], { prepare: true });
  return rs.rowLength > 0;
}

async function tablesOf(client: Client, ks: string): Promise<string[]> {
  const rs = await client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?', [ks], { prepare: true });
  return rs.rows.map((r) => r.get('table_name') as string).sort();
}

describe('fault: hostile configuration', () => {
  const stack = useFaultStack();
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  /** An in-process worker of a config checked by the YAML schema only (a config built in code skips `validate`'s cross-checks); stopped after the test. */
  const workerOf = (doc: Record<string, unknown>): Worker => {
    const w = new Worker(
      { config: AdjunctConfigSchema.parse(doc), baseDir: process.cwd() },
      { logger: silentLogger, metrics: new AdjunctMetrics({ defaultMetrics: false }) },
    );
    workers.push(w);
    return w;
  };

  it('adjunct validate rejects injected names/keyspaces, unknown keys and wrong types with exit 2 and YAML paths', async () => {
    const n = names('hostile');
    const doc = configDoc(n.keyspace, n.group, [
      pipeline(
        { name: "s'; DROP TABLE x; --", tableOptionz: { comment: 'typo' } },
        { name: 'p; DROP KEYSPACE system_auth', topics: ["t'; DROP TABLE x; --"] },
      ),
      pipeline(
        { name: 'ok', historyRetention: 'forever', cleanupEvery: 'often' },
        { name: 'q', topics: 'not-a-list', valueConverter: 'cql' },
      ),
    ]);
    const cassandra = doc.cassandra as Record<string, unknown>;
    cassandra.keyspace = 'ks; DROP KEYSPACE system_auth; --';
    cassandra.replication = { class: 'NetworkTopologyStrategy', dataCenters: { "dc1': 1}; DROP KEYSPACE x; --": 1 } };
    cassandra.bogus = true;
    (doc.worker as Record<string, unknown>).maxInFlight = 'lots';
    const expected = [
      'cassandra',
      'cassandra.keyspace',
      'cassandra.replication',
      'worker.maxInFlight',
      'pipelines[0].name',
      'pipelines[0].topics[0]',
      'pipelines[0].store',
      'pipelines[0].store.name',
      'pipelines[1].topics',
      'pipelines[1].valueConverter',
      'pipelines[1].store.historyRetention',
      'pipelines[1].store.cleanupEvery',
    ];

    const text = await validate(doc);
    expect(text.code).toBe(2);
    for (const p of expected) expect(text.out).toContain(`  - ${p}`);
    expect(text.out).toMatch(/unknown key\(s\): bogus/);
    expect(text.out).toMatch(/unknown key\(s\): tableOptionz/);
    expect(text.out).toMatch(/\(line \d+/);

    const json = await validate(doc, true);
    expect(json.code).toBe(2);
    const report = JSON.parse(json.out) as { valid: boolean; problems: { path: string; message: string; line?: number }[] };
    expect(report.valid).toBe(false);
    const paths = new Set(report.problems.map((p) => p.path));
    for (const p of expected) expect(paths).toContain(p);
    expect(report.problems.every((p) => typeof p.line === 'number')).toBe(true);
    note(`validate: ${report.problems.length} problems: ${[...paths].join(', ')}`);

    // Each hostile value alone is rejected too (no problem hides behind another).
    const single: [string, (d: Record<string, unknown>) => void][] = [
      ['cassandra.keyspace', (d) => ((d.cassandra as Record<string, unknown>).keyspace = "adjunct'; DROP KEYSPACE x")],
      [
        'pipelines[0].store.name',
        (d) => (((d.pipelines as Record<string, Record<string, unknown>>[])[0].store as Record<string, unknown>).name = 'a b'),
      ],
      [
        'pipelines[0].store.tableOptions',
        (d) =>
          (((d.pipelines as Record<string, Record<string, unknown>>[])[0].store as Record<string, unknown>).tableOptions =
            "compaction = {'class': 'x'}"),
      ],
    ];
    for (const [p, mutate] of single) {
      const d = configDoc(n.keyspace, n.group, [pipeline({})]);
      mutate(d);
      const r = await validate(d, true);
      expect({ p, code: r.code }).toEqual({ p, code: 2 });
      expect((JSON.parse(r.out) as { problems: { path: string }[] }).problems.map((x) => x.path)).toEqual([p]);
    }
  });

  it('adjunct validate rejects prototype-reaching field paths and store names that share a table, naming YAML paths', async () => {
    const n = names('hostpath');
    const polluting = configDoc(n.keyspace, n.group, [
      pipeline(
        {},
        { extract: { value: { project: ['ok', 'constructor.prototype.isAdmin'] }, key: { from: 'value', path: '__proto__.id' } } },
      ),
    ]);
    const r = await validate(polluting, true);
    expect(r.code).toBe(2);
    const problems = (JSON.parse(r.out) as { problems: { path: string; message: string }[] }).problems;
    expect(problems.map((x) => x.path).sort()).toEqual(['pipelines[0].extract.key.path', 'pipelines[0].extract.value.project[1]']);
    expect(problems.every((x) => /would reach a prototype/.test(x.message))).toBe(true);

    const colliding = configDoc(n.keyspace, n.group, [
      pipeline({ name: 'a.b' }, { name: 'p1' }),
      pipeline({ name: 'A_b' }, { name: 'p2' }),
    ]);
    const c = await validate(colliding, true);
    expect(c.code).toBe(2);
    expect(JSON.parse(c.out).problems).toEqual([
      expect.objectContaining({
        path: 'pipelines[1].store.name',
        message: expect.stringMatching(/store "A_b" and store "a\.b" \(pipelines\[0\]\.store\.name\) both map to Cassandra table "a_b"/),
      }),
    ]);
  });

  it('a worker refuses colliding store names in a config built in code before sending any CQL', async () => {
    const n = names('hostcoll');
    const doc = shortStop(
      configDoc(n.keyspace, n.group, [pipeline({ name: 'Orders.v1' }, { name: 'p1' }), pipeline({ name: 'orders-v1' }, { name: 'p2' })]),
    );
    const w = workerOf(doc);
    await w.start().catch(() => undefined);
    await w.stop();
    expect(w.lastError?.code).toBe('CONFIG_INVALID');
    expect(w.lastError?.message).toMatch(
      /pipelines\[1\]\.store\.name: store "orders-v1" and store "Orders\.v1" \(pipelines\[0\]\.store\.name\) both map to Cassandra table "orders_v1"/,
    );
    expect(await keyspaceExists(stack.client, n.keyspace)).toBe(false);
  });

  it('a second deployment whose store maps to a table another store owns is refused by the catalog; the owner keeps its table', async () => {
    const n = names('hostown');
    await createTopic(stack.kafka, `${n.topic}-1`, 1);
    await createTopic(stack.kafka, `${n.topic}-2`, 1);
    const start = async (group: string, pipelineName: string, storeName: string, topic: string) => {
      const doc = shortStop(configDoc(n.keyspace, group, [{ name: pipelineName, topics: [topic], store: { name: storeName } }]));
      const w = workerOf(doc);
      const err = await w.start().then(
        () => undefined,
        (e: unknown) => e as { code?: string; message: string },
      );
      return { w, err };
    };
    const first = await start(`${n.group}-a`, 'orders', 'a.b', `${n.topic}-1`);
    expect(first.err).toBeUndefined();
    // Each config alone is valid; together they would write one table.
    const second = await start(`${n.group}-b`, 'orders2', 'A_b', `${n.topic}-2`);
    await second.w.stop();
    expect(second.err?.code).toBe('TABLE_OWNED');
    expect(second.err?.message).toMatch(
      /tables a_b_g\* belong to store "a\.b" \(pipeline "orders", worker group "[^"]+-a"\); store "A_b" \(pipeline "orders2", worker group "[^"]+-b"\) maps to the same tables/,
    );
    // The same store from another deployment (another worker group) is refused too.
    const third = await start(`${n.group}-c`, 'orders', 'a.b', `${n.topic}-1`);
    await third.w.stop();
    expect(third.err?.code).toBe('TABLE_OWNED');
    // The refused stores got no catalog entry; the owner's table is live and its owner row unchanged.
    const stores = await stack.client.execute(`SELECT store FROM ${n.keyspace}.adjunct_stores`);
    expect(stores.rows.map((r) => r.get('store'))).toEqual(['a.b']);
    const owner = await stack.client.execute(
      `SELECT store, pipeline, group_id FROM ${n.keyspace}.adjunct_table_owners WHERE base_table = 'a_b'`,
    );
    expect(owner.first()).toMatchObject({ store: 'a.b', pipeline: 'orders', group_id: `${n.group}-a` });
    expect(first.w.state).toBe('RUNNING');
    // A restart of the owner (a scale-out worker of the same deployment) claims the same table again.
    const again = await start(`${n.group}-a`, 'orders', 'a.b', `${n.topic}-1`);
    expect(again.err).toBeUndefined();
    await again.w.stop();
    await first.w.stop();
    expect(await tablesOf(stack.client, n.keyspace)).toContain('a_b_g1');
  });

  // Table options that the YAML schema accepts (it is a free-form map) but the store's validator refuses.
  const hostileOptions: [string, Record<string, unknown>][] = [
    ['compaction class with a quote', { compaction: { class: INJECT } }],
    ['option key with CQL', { "comment = 'a'; DROP TABLE x; --": 'y' }],
    ['comment with a quote', { comment: "it's'; DROP TABLE x; --" }],
    ['map key with a quote', { compaction: { class: 'LeveledCompactionStrategy', "sstable_size_in_mb': '1'}; DROP TABLE x; --": 1 } }],
    ['integer option as CQL text', { gc_grace_seconds: '1; DROP TABLE x' }],
    ['map value that is an object', { caching: { keys: { nested: "'; DROP TABLE x; --" } } }],
  ];

  it.each(hostileOptions)(
    'the worker refuses table options (%s) with INVALID_IDENTIFIER and sends no store DDL',
    async (_what, tableOptions) => {
      const n = names('hostopt');
      const doc = shortStop(configDoc(n.keyspace, n.group, [pipeline({ tableOptions })]));
      // The YAML schema lets them through (free-form map): only the store's validator can refuse them.
      const w = workerOf(doc);
      let err: unknown;
      try {
        await w.start();
      } catch (e) {
        err = e;
      } finally {
        await w.stop();
      }
      expect(err).toBeDefined();
      expect((err as { code?: string }).code).toBe('INVALID_IDENTIFIER');
      expect(w.state).toBe('FAILED');
      expect(w.lastError?.code).toBe('INVALID_IDENTIFIER');
      // No store table exists (whatever else the worker created before it looked at the store's options).
      const tables = (await keyspaceExists(stack.client, n.keyspace)) ? await tablesOf(stack.client, n.keyspace) : [];
      note(`table options "${_what}": ${(err as Error).message.slice(0, 140)}; keyspace tables: [${tables.join(', ')}]`);
      expect(tables.filter((t) => t.startsWith('s_'))).toEqual([]);
    },
  );

  // Strict form of the brief: the worker refuses bad table options before sending ANY CQL, so not even the
  // keyspace or the catalog tables exist.
  it('the worker creates no keyspace at all when a pipeline has invalid table options', async () => {
    const n = names('hostks');
    const doc = shortStop(configDoc(n.keyspace, n.group, [pipeline({ tableOptions: { compaction: { class: INJECT } } })]));
    const w = workerOf(doc);
    await w.start().catch(() => undefined);
    await w.stop();
    expect(w.lastError?.code).toBe('INVALID_IDENTIFIER');
    expect(await keyspaceExists(stack.client, n.keyspace)).toBe(false);
  });
});
