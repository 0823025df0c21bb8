import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ConfigProblem, ConfigValidationError, configWarnings, loadConfigFile, parseConfig } from '../../src/config';
import { deprecationWarnings } from '../../src/config/run-checks';

const head = `kafka:
  brokers: [127.0.0.1:9092]
cassandra:
  contactPoints: [127.0.0.1]
  localDataCenter: dc1
  keyspace: ks
`;

function problems(text: string, file?: string): ConfigProblem[] {
  try {
    if (file) {
      fs.writeFileSync(file, text);
      loadConfigFile(file);
    } else parseConfig(text, { env: {} });
  } catch (e) {
    if (e instanceof ConfigValidationError) return e.problems;
    throw e;
  }
  return [];
}

describe('validate catches what run would reject', () => {
  it('options that do not apply: historyRetention on kv, extract.options without module (topicRefreshInterval applies to topics too)', () => {
    const ps = problems(`${head}pipelines:
  - name: p
    topics: [t]
    topicRefreshInterval: 10s
    extract:
      options: { a: 1 }
    store:
      name: s
      kind: kv
      historyRetention: 1h
`);
    expect(ps.map((p) => [p.path, p.line])).toEqual([
      ['pipelines[0].extract.options', 12],
      ['pipelines[0].store.historyRetention', 16],
    ]);
    expect(ps[1].message).toMatch(/applies only to versioned stores/);
  });

  it('a key serde the key converter cannot feed (int64 with a string key)', () => {
    const ps = problems(`${head}pipelines:
  - name: p
    topics: [t]
    keyConverter: string
    store: { name: s, keySerde: int64 }
`);
    expect(ps).toEqual([
      expect.objectContaining({
        path: 'pipelines[0].store.keySerde',
        message: expect.stringMatching(/keySerde int64 cannot hold the keys keyConverter string produces/),
      }),
    ]);
    expect(
      problems(`${head}pipelines:\n  - name: p\n    topics: [t]\n    keyConverter: json\n    store: { name: s, keySerde: int64 }\n`),
    ).toEqual([]);
  });

  it('a custom extractor module that does not exist (resolved against the config file)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adjunct-run-checks-'));
    const text = `${head}pipelines:\n  - name: p\n    topics: [t]\n    extract: { module: ./missing-extractor }\n    store: { name: s }\n`;
    const ps = problems(text, path.join(dir, 'a.yaml'));
    expect(ps).toEqual([
      expect.objectContaining({
        path: 'pipelines[0].extract.module',
        message: expect.stringMatching(/extractor module "\.\/missing-extractor" not found/),
      }),
    ]);
    fs.writeFileSync(path.join(dir, 'missing-extractor.js'), 'exports.extract = (r) => r;');
    expect(problems(text, path.join(dir, 'a.yaml'))).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('unknown keys say "did you mean"; missing required keys say "required"; problems are sorted by line', () => {
    const ps = problems(`kafka:
  brokers: [127.0.0.1:9092]
cassandra:
  contactPoints: [127.0.0.1]
  keyspace: ks
pipelines:
  - name: p
    topics: [t]
    store:
      kind: versioned
      histroyRetention: 1h
worker:
  logLevl: debug
`);
    expect(ps.map((p) => p.line)).toEqual([...ps.map((p) => p.line)].sort((a, b) => (a ?? 1e9) - (b ?? 1e9)));
    expect(ps).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'pipelines[0].store.name', line: 10, message: expect.stringMatching(/^required/) }),
        expect.objectContaining({
          path: 'pipelines[0].store',
          line: 11,
          message: 'unknown key(s): histroyRetention (did you mean "historyRetention"?)',
        }),
        expect.objectContaining({ path: 'worker', line: 13, message: 'unknown key(s): logLevl (did you mean "logLevel"?)' }),
      ]),
    );
  });

  it('an entry that is not an object gets one problem, not one per rule that cannot read it; its siblings are still checked', () => {
    const ps = problems(
      `${head}pipelines:\n  - name: a\n    topics: [t1]\n    store: { name: s }\n  - 5\n  - name: a\n    topics: [t2]\n    store: { name: s2 }\n`,
    );
    expect(ps.map((p) => [p.path, p.message])).toEqual([
      ['pipelines[1]', 'Invalid input: expected object, received number'],
      ['pipelines[2].name', 'duplicate pipeline name "a" (also pipelines[0])'],
    ]);
  });

  it('a time-to-live on a versioned store is refused (KIP-889 keeps the latest version); a kv store takes it', () => {
    const ps = problems(
      `${head}pipelines:\n  - name: a\n    topics: [t1]\n    store: { name: s, ttlSeconds: 60 }\n  - name: b\n    topics: [t2]\n    store: { name: s2, tableOptions: { default_time_to_live: 60 } }\n  - name: c\n    topics: [t3]\n    store: { name: s3, kind: kv, ttlSeconds: 60 }\n`,
    );
    expect(ps.map((p) => p.path)).toEqual(['pipelines[0].store.ttlSeconds', 'pipelines[1].store.tableOptions.default_time_to_live']);
    expect(ps[0].message).toMatch(/time-to-live applies only to kv stores/);
  });

  it('store names that map to one Cassandra table are reported at the later store (with its line)', () => {
    const ps = problems(
      `${head}pipelines:\n  - name: a\n    topics: [t1]\n    store: { name: fx-rates }\n  - name: b\n    topics: [t2]\n    store: { name: fx_rates }\n`,
    );
    expect(ps).toEqual([
      expect.objectContaining({ path: 'pipelines[1].store.name', line: 13, message: expect.stringMatching(/both map to Cassandra table/) }),
    ]);
  });

  it('a public bind without an admin token is a warning, not an error', () => {
    const c = parseConfig(`${head}worker:\n  http: { host: 0.0.0.0 }\npipelines:\n  - name: p\n    topics: [t]\n    store: { name: s }\n`, {
      env: {},
    });
    expect(configWarnings(c)).toEqual([
      { path: ['worker', 'http', 'adminToken'], message: expect.stringMatching(/admin routes will be off/) },
    ]);
    const withToken = parseConfig(
      `${head}worker:\n  http: { host: 0.0.0.0, adminToken: 0123456789abcdef }\npipelines:\n  - name: p\n    topics: [t]\n    store: { name: s }\n`,
      { env: {} },
    );
    expect(configWarnings(withToken)).toEqual([]);
  });

  it('a deprecated setting is a warning naming its path, not an error', () => {
    const c = parseConfig(`${head}pipelines:\n  - name: p\n    topics: [t]\n    store: { name: s, cleanupEvery: 64 }\n`, { env: {} });
    expect(configWarnings(c)).toEqual([
      { path: ['pipelines', 0, 'store', 'cleanupEvery'], message: expect.stringMatching(/deprecated and has no effect/) },
    ]);
    expect(deprecationWarnings(c)).toEqual(configWarnings(c));
  });
});
