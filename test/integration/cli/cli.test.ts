import { ChildProcess, execFile, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Client } from 'cassandra-driver';
import type { FastifyInstance } from 'fastify';
import { AdjunctError } from '../../../src/errors';
import { buildHttpServer, HttpWorker } from '../../../src/http/server';
import { Lookup, openLookup } from '../../../src/lookup';
import { silentLogger } from '../../../src/observability/logger';
import { AdjunctMetrics } from '../../../src/observability/metrics';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { cleanUp, newCassandraClient, uniqueName } from '../helpers';
import { prepareKeyspace, seed } from '../lookup/fixtures';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '../../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const keyspace = uniqueName('it_cli');
const TOKEN = 'cli-admin-token-0123456789';
let dir: string;
let client: Client;
let configFile: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tsx src/cli/main.ts ...args` and collects exit code and output. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ['src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, ADJUNCT_LOG_LEVEL: 'silent', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

function configText(ks: string, contactPoint: string, extra = ''): string {
  return [
    'kafka:',
    `  brokers: ["${stackEndpoints().kafkaBrokers[0]}"]`,
    'cassandra:',
    `  contactPoints: ["${contactPoint}"]`,
    '  localDataCenter: datacenter1',
    `  keyspace: ${ks}`,
    'worker:',
    '  logLevel: silent',
    'pipelines:',
    '  - name: customers-pipe',
    '    topics: [customers-changelog]',
    '    bootstrap: true',
    '    store:',
    '      name: customers',
    extra,
  ].join('\n');
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adjunct-cli-'));
  client = await newCassandraClient();
  await prepareKeyspace(client, keyspace);
  await seed(client, keyspace, { store: 'customers', kind: 'versioned', scope: 'global' }, [
    { key: 'c1', value: { name: 'Ada' }, ts: 100 },
    { key: 'c1', value: { name: 'Ada L.' }, ts: 200 },
  ]);
  await seed(client, keyspace, { store: 'short', kind: 'versioned', scope: 'global', historyRetentionMs: 1000 }, [
    { key: 'k', value: 'a', ts: 100 },
    { key: 'k', value: 'b', ts: 5000 },
  ]);
  await seed(client, keyspace, { store: 'counters', kind: 'kv', scope: 'global', keySerde: 'int64' }, [
    { key: BigInt(7), value: { n: 7 } },
  ]);
  const ep = stackEndpoints();
  configFile = path.join(dir, 'adjunct.yaml');
  fs.writeFileSync(configFile, configText(keyspace, `${ep.cassandraContactPoints[0]}:${ep.cassandraPort}`));
});

afterAll(() =>
  cleanUp(
    () => client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`),
    () => client?.shutdown(),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  ),
);

describe('validate', () => {
  it('accepts config/minimal.yaml (exit 0)', async () => {
    const r = await cli(['validate', '--config', 'config/minimal.yaml']);
    expect(r).toMatchObject({ code: 0 });
    expect(r.stdout).toContain('valid');
  });

  it('rejects broken files with exit 2, naming the YAML path and line', async () => {
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(bad, configText(keyspace, '127.0.0.1:9042', '      kind: versionedd'));
    const r = await cli(['validate', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('pipelines[0].store.kind');
    expect(r.stderr).toMatch(/line 15/);
    const syntax = path.join(dir, 'syntax.yaml');
    fs.writeFileSync(syntax, 'kafka:\n  brokers: [\n  x: : y\n');
    const s = await cli(['validate', '--config', syntax]);
    expect(s.code).toBe(2);
    expect(s.stderr).toMatch(/line 3/);
    const json = await cli(['validate', '--config', bad, '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, problems: [{ path: 'pipelines[0].store.kind', line: 15 }] });
  });
});

describe('lookup', () => {
  it('reads latest, as-of and history as JSON and as text', async () => {
    const latest = await cli(['lookup', 'customers', 'c1', '--config', configFile, '--json']);
    expect(latest.code).toBe(0);
    expect(JSON.parse(latest.stdout)).toEqual({ store: 'customers', key: 'c1', value: { name: 'Ada L.' }, timestamp: 200, generation: 1 });
    const asOf = await cli(['lookup', 'customers', 'c1', '--as-of', '150', '--config', configFile, '--json']);
    expect(JSON.parse(asOf.stdout)).toMatchObject({ value: { name: 'Ada' }, timestamp: 100, validTo: 200 });
    const asOfText = await cli(['lookup', 'customers', 'c1', '--as-of', '1970-01-01T00:00:00.150Z', '--config', configFile]);
    expect(asOfText.stdout).toContain('valid from 100 (1970-01-01T00:00:00.100Z) until 200 (1970-01-01T00:00:00.200Z)');
    const noValidTo = await cli(['lookup', 'customers', 'c1', '--as-of', '150', '--no-valid-to', '--config', configFile, '--json']);
    expect(JSON.parse(noValidTo.stdout)).toEqual(expect.objectContaining({ value: { name: 'Ada' }, timestamp: 100 }));
    expect(JSON.parse(noValidTo.stdout).validTo).toBeUndefined();
    const noValidToText = await cli(['lookup', 'customers', 'c1', '--as-of', '150', '--no-valid-to', '--config', configFile]);
    expect(noValidToText.stdout).toContain('valid from 100 (1970-01-01T00:00:00.100Z)\n');
    expect(noValidToText.stdout).not.toMatch(/until|latest version/);
    const hist = await cli([
      'lookup',
      'customers',
      'c1',
      '--history',
      '--from',
      '0',
      '--to',
      '1970-01-01T00:00:00.150Z',
      '--config',
      configFile,
      '--json',
    ]);
    expect(hist.code).toBe(0);
    expect(JSON.parse(hist.stdout).versions).toEqual([{ timestamp: 100, validTo: 200, value: { name: 'Ada' } }]);
    const human = await cli(['lookup', 'customers', 'c1', '--config', configFile]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('"name": "Ada L."');
    expect(human.stdout).toContain('valid from 200');
    const table = await cli(['lookup', 'customers', 'c1', '--history', '--config', configFile]);
    expect(table.stdout.split('\n')[0]).toMatch(/^VALIDFROM\s+VALIDUNTIL\s+TIMESTAMP\s+VALIDTO\s+VALUE/);
    expect(table.stdout).toMatch(/1970-01-01T00:00:00.100Z\s+1970-01-01T00:00:00.200Z\s+100\s+200/);
    const kv = await cli(['lookup', 'counters', '7', '--config', configFile, '--json']);
    expect(JSON.parse(kv.stdout)).toMatchObject({ key: '7', value: { n: 7 } });
  });

  it('exit 3 for a missing key or store, 2 for a bad config, 4 when Cassandra is unreachable', async () => {
    const missing = await cli(['lookup', 'customers', 'nobody', '--config', configFile]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('not found');
    expect((await cli(['lookup', 'customers', 'c1', '--as-of', '50', '--config', configFile])).code).toBe(3);
    // A day that does not exist is refused, not rolled over to another one (Date.parse reads 2026-02-31 as March 3rd).
    const badDay = await cli(['lookup', 'customers', 'c1', '--as-of', '2026-02-31', '--config', configFile]);
    expect({ code: badDay.code, stderr: badDay.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('invalid time "2026-02-31"') });
    // Below the retention horizon of the key's partition (stream time 5000 - retention 1000), the message says so.
    const expired = await cli(['lookup', 'short', 'k', '--as-of', '200', '--config', configFile]);
    expect(expired.code).toBe(3);
    expect(expired.stderr).toContain('before the retention horizon 4000 (1970-01-01T00:00:04.000Z) of partition t:0');
    expect((await cli(['lookup', 'short', 'k', '--as-of', '4500', '--config', configFile, '--json'])).stdout).toContain('"validTo": 5000');
    const unknown = await cli(['lookup', 'ghosts', 'c1', '--config', configFile]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('unknown store');
    expect((await cli(['lookup', 'customers', 'c1', '--config', path.join(dir, 'missing.yaml')])).code).toBe(2);
    const down = path.join(dir, 'down.yaml');
    fs.writeFileSync(down, configText(keyspace, '127.0.0.1:1'));
    const unreachable = await cli(['lookup', 'customers', 'c1', '--config', down]);
    expect(unreachable.code).toBe(4);
    const badKey = await cli(['lookup', 'counters', 'seven', '--config', configFile]);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain('not an int64');
  });
});

describe('status', () => {
  it('--config reads the catalog and status tables from Cassandra', async () => {
    const r = await cli(['status', '--config', configFile, '--json']);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.stores.map((s: { name: string }) => s.name)).toEqual(['counters', 'customers', 'short']);
    expect(body.horizons).toContainEqual({ store: 'short', writers: [{ writer: 't:0', streamTime: 5000, horizon: 4000 }] });
    expect(body.readiness).toMatchObject({
      ready: false,
      notReady: ['customers-pipe'],
      pipelines: [{ pipeline: 'customers-pipe', state: 'MISSING' }],
    });
    const human = await cli(['status', '--config', configFile]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/STORE\s+KIND\s+SCOPE/);
    expect(human.stdout).toMatch(/customers\s+versioned\s+global\s+1/);
    expect(human.stdout).toMatch(/short\s+t:0\s+1970-01-01T00:00:05.000Z\s+1970-01-01T00:00:04.000Z/);
  });

  it('--url: exit 4 when no worker answers', async () => {
    const r = await cli(['status', '--url', 'http://127.0.0.1:1']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('cannot reach');
  });
});

describe('against a running HTTP API', () => {
  let lookup: Lookup;
  let app: FastifyInstance;
  let url: string;
  const calls: string[] = [];
  const worker: HttpWorker = {
    metrics: new AdjunctMetrics({ defaultMetrics: false }),
    isReady: () => true,
    status: () =>
      ({
        workerId: 'w1',
        state: 'RUNNING',
        startedAt: null,
        pipelines: [
          {
            name: 'customers-pipe',
            state: 'RUNNING',
            store: 'customers',
            generation: 1,
            counts: { consumed: 5, written: 4, deadLettered: 0 },
            bootstrap: { state: 'READY', done: 5, total: 5 },
            partitions: [
              { topic: 'customers-changelog', partition: 0, committedOffset: '5', lag: 0, observedStreamTime: 5000, horizon: 4000 },
            ],
          },
        ],
      }) as never,
    runner: (name: string) => {
      if (name !== 'customers-pipe') throw new AdjunctError(`unknown pipeline ${name}`, { code: 'UNKNOWN_PIPELINE' });
      return {
        pause: async () => undefined,
        resume: async () => undefined,
        reload: async () => (calls.push('reload'), 2),
        rollback: async (to: number) => (calls.push(`rollback:${to}`), { current: to, previous: 2, changed: true }),
      };
    },
  };

  beforeAll(async () => {
    lookup = await openLookup({ client, keyspace });
    app = await buildHttpServer({ worker, lookup, config: { host: '127.0.0.1', port: 0, adminToken: TOKEN }, logger: silentLogger });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() =>
    cleanUp(
      () => app?.close(),
      () => lookup?.close(),
    ),
  );

  it('status --url prints the worker status', async () => {
    const r = await cli(['status', '--url', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/customers-pipe\s+RUNNING\s+customers\s+1\s+5\s+4/);
    expect(r.stdout).toMatch(/customers-pipe\s+customers-changelog\/0\s+5\s+0\s+1970-01-01T00:00:05.000Z\s+1970-01-01T00:00:04.000Z/);
    expect(JSON.parse((await cli(['status', '--url', url, '--json'])).stdout)).toMatchObject({ workerId: 'w1' });
  });

  it('reload/rollback POST to the admin API with the token (flag or ADJUNCT_ADMIN_TOKEN)', async () => {
    const denied = await cli(['reload', 'customers-pipe', '--url', url]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('--token');
    const ok = await cli(['reload', 'customers-pipe', '--url', url, '--token', TOKEN]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('building generation 2');
    expect((await cli(['rollback', 'customers-pipe', '--url', url], { ADJUNCT_ADMIN_TOKEN: TOKEN })).code).toBe(1); // the target is required
    const rb = await cli(['rollback', 'customers-pipe', '--url', url, '--to', '1', '--json'], { ADJUNCT_ADMIN_TOKEN: TOKEN });
    expect(rb.code).toBe(0);
    expect(JSON.parse(rb.stdout)).toMatchObject({ current: 1, previous: 2 });
    expect(calls).toEqual(['reload', 'rollback:1']);
    expect((await cli(['reload', 'nope', '--url', url, '--token', TOKEN])).code).toBe(3);
    expect((await cli(['reload', 'customers-pipe', '--url', 'http://127.0.0.1:1', '--token', TOKEN])).code).toBe(4);
  });
});

describe('serve', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('serves the read-only API from a config, and stops cleanly on SIGTERM', async () => {
    child = spawn(TSX, ['src/cli/main.ts', 'serve', '--config', configFile, '--port', '0'], {
      cwd: ROOT,
      env: { ...process.env, ADJUNCT_LOG_LEVEL: 'silent' },
    });
    const address = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (d) => {
        out += String(d);
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
    });
    const res = await fetch(`${address}/stores/customers/keys/c1?asOf=150`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ value: { name: 'Ada' } });
    const ready = await fetch(`${address}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, notReady: ['customers-pipe'] });
    expect((await fetch(`${address}/pipelines/customers-pipe/reload`, { method: 'POST' })).status).toBe(503);
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
