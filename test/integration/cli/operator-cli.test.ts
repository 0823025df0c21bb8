import { execFile } from 'child_process';
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

// The CLI an operator expects: read commands on a cassandra-only config, admin commands located by -c, JSON errors.

const ROOT = path.resolve(__dirname, '../../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const keyspace = uniqueName('it_cli_op');
const TOKEN = 'operator-admin-token-0123';
let dir: string;
let client: Client;
let cassandraOnly: string;
let lookup: Lookup;
let app: FastifyInstance;
const calls: string[] = [];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ['src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, ADJUNCT_LOG_LEVEL: 'silent', ADJUNCT_ADMIN_TOKEN: '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

const worker: HttpWorker = {
  metrics: new AdjunctMetrics({ defaultMetrics: false }),
  isReady: () => true,
  status: () => ({ workerId: 'w1', state: 'RUNNING', pipelines: [{ name: 'rates', state: 'FAILED', generation: 1 }] }),
  runner: (name: string) => {
    if (name !== 'rates') throw new AdjunctError(`unknown pipeline ${name}`, { code: 'UNKNOWN_PIPELINE' });
    return {
      pause: async () => void calls.push('pause'),
      resume: async () => undefined,
      reload: async () => 2,
      rollback: async (to: number) => ({ current: to, previous: 2, changed: true }),
      restart: async () => (calls.push('restart'), 'RUNNING'),
    };
  },
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adjunct-cli-op-'));
  client = await newCassandraClient();
  await prepareKeyspace(client, keyspace);
  await seed(client, keyspace, { store: 'rates', kind: 'versioned', scope: 'global' }, [
    { key: 'eur', value: { r: 1 }, ts: 1_000 },
    { key: 'eur', value: { r: 2 }, ts: 2_000 },
  ]);
  const ep = stackEndpoints();
  const cassandra = [
    'cassandra:',
    `  contactPoints: ["${ep.cassandraContactPoints[0]}:${ep.cassandraPort}"]`,
    '  localDataCenter: datacenter1',
    `  keyspace: ${keyspace}`,
  ];
  cassandraOnly = path.join(dir, 'read.yaml');
  fs.writeFileSync(cassandraOnly, cassandra.join('\n') + '\n');
  lookup = await openLookup({ client, keyspace });
  app = await buildHttpServer({ worker, lookup, config: { host: '127.0.0.1', port: 0, adminToken: TOKEN }, logger: silentLogger });
  const url = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
  fs.writeFileSync(
    path.join(dir, 'worker.yaml'),
    [...cassandra, 'worker:', '  http:', `    host: 0.0.0.0`, `    port: ${url.port}`, `    adminToken: ${TOKEN}`].join('\n') + '\n',
  );
});

afterAll(() =>
  cleanUp(
    () => app?.close(),
    () => lookup?.close(),
    () => client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`),
    () => client?.shutdown(),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  ),
);

it('lookup and status -c accept a config holding only cassandra; times are ISO, validTo included', async () => {
  const asOf = await cli(['lookup', 'rates', 'eur', '-c', cassandraOnly, '--as-of', '1970-01-01T00:00:01.500Z']);
  expect(asOf.stderr).toBe('');
  expect(asOf.code).toBe(0);
  expect(asOf.stdout).toContain('valid from 1000 (1970-01-01T00:00:01.000Z) until 2000 (1970-01-01T00:00:02.000Z)');
  const history = await cli(['lookup', 'rates', 'eur', '-c', cassandraOnly, '--history']);
  expect(history.code).toBe(0);
  expect(history.stdout).toMatch(/1970-01-01T00:00:01\.000Z\s+1970-01-01T00:00:02\.000Z/);
  const status = await cli(['status', '-c', cassandraOnly, '--json']);
  expect(status.code).toBe(0);
  expect(JSON.parse(status.stdout).stores.map((s: { name: string }) => s.name)).toEqual(['rates']);
});

it('--json errors are JSON with the code and the exit code', async () => {
  const missing = await cli(['lookup', 'rates', 'usd', '-c', cassandraOnly, '--json']);
  expect(missing.code).toBe(3);
  expect(JSON.parse(missing.stdout)).toMatchObject({ error: 'NOT_FOUND', exitCode: 3, message: expect.stringContaining('usd') });
  const unknown = await cli(['lookup', 'nope', 'x', '-c', cassandraOnly, '--json']);
  expect(JSON.parse(unknown.stdout)).toMatchObject({ error: 'UNKNOWN_STORE', exitCode: 3 });
  const badConfig = path.join(dir, 'bad.yaml');
  fs.writeFileSync(badConfig, 'cassandra:\n  keyspace: 1\n');
  const bad = await cli(['lookup', 'rates', 'eur', '-c', badConfig, '--json']);
  expect(bad.code).toBe(2);
  expect(JSON.parse(bad.stdout)).toMatchObject({ error: 'CONFIG_INVALID', exitCode: 2 });
});

it('admin commands find the worker and its token from -c (worker.http host, port, adminToken)', async () => {
  calls.length = 0;
  const pause = await cli(['pause', 'rates', '-c', path.join(dir, 'worker.yaml')]);
  expect(pause.stderr).toBe('');
  expect(pause.code).toBe(0);
  const restart = await cli(['restart', 'rates', '-c', path.join(dir, 'worker.yaml'), '--json']);
  expect(restart.code).toBe(0);
  expect(JSON.parse(restart.stdout)).toEqual({ pipeline: 'rates', action: 'restart', state: 'RUNNING' });
  expect(calls).toEqual(['pause', 'restart']);
  const noToken = await cli(['pause', 'rates', '-c', cassandraOnly, '--json']);
  expect(noToken.code).toBe(4);
  expect(JSON.parse(noToken.stdout)).toMatchObject({ error: 'UNAVAILABLE' });
});

it('validate: a public bind without a token is a warning (exit 0); an unknown key says "did you mean" (exit 2)', async () => {
  const base = fs.readFileSync(cassandraOnly, 'utf8');
  const pipelines = 'pipelines:\n  - name: p\n    topics: [t]\n    store: { name: s }\n';
  const publicBind = path.join(dir, 'public.yaml');
  fs.writeFileSync(publicBind, `kafka:\n  brokers: [127.0.0.1:9092]\n${base}worker:\n  http: { host: 0.0.0.0 }\n${pipelines}`);
  const ok = await cli(['validate', '-c', publicBind, '--json']);
  expect(ok.code).toBe(0);
  expect(JSON.parse(ok.stdout)).toMatchObject({
    valid: true,
    warnings: [{ path: 'worker.http.adminToken', message: expect.stringMatching(/admin routes will be off/) }],
  });
  const typo = path.join(dir, 'typo.yaml');
  fs.writeFileSync(typo, `kafka:\n  brokers: [127.0.0.1:9092]\n${base}${pipelines}    keyConvertor: json\n`);
  const bad = await cli(['validate', '-c', typo]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/unknown key\(s\): keyConvertor \(did you mean "keyConverter"\?\)/);
});
