import { ConfigValidationError, parseConfig, configJsonSchema, interpolateEnv, parseDurationMs } from '../../src/config';

const base = `
kafka:
  brokers: [127.0.0.1:9092]
cassandra:
  contactPoints: [127.0.0.1:9042]
pipelines:
  - name: rates
    topics: [rates]
    store: { name: rates }
`;

function problems(text: string, env: NodeJS.ProcessEnv = {}) {
  try {
    parseConfig(text, { env });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigValidationError);
    return (e as ConfigValidationError).problems;
  }
  throw new Error('expected the config to be rejected');
}

describe('config loading', () => {
  it('applies defaults to a minimal config', () => {
    const c = parseConfig(base, { env: {} });
    expect(c.worker.groupId).toBe('adjunct');
    expect(c.pipelines[0].store.kind).toBe('versioned');
    expect(c.pipelines[0].store.historyRetention).toBe(86_400_000);
    expect(c.pipelines[0].errors.tolerance).toBe('none');
    expect(c.cassandra.keyspace).toBe('adjunct');
  });

  it('reports every problem with its YAML path and line', () => {
    const ps = problems(`
kafka:
  brokers: []
  bogus: 1
cassandra:
  contactPoints: [x]
  keyspace: "ks; DROP TABLE x"
pipelines:
  - name: rates
    topics: [rates]
    store: { name: rates, historyRetention: 7x, kind: wide }
`);
    const byPath = Object.fromEntries(ps.map((p) => [p.path, p]));
    expect(byPath['kafka.brokers'].line).toBe(3);
    expect(byPath['kafka'].message).toMatch(/unknown key\(s\): bogus/);
    expect(byPath['kafka'].line).toBe(4);
    expect(byPath['cassandra.keyspace'].line).toBe(7);
    expect(byPath['pipelines[0].store.historyRetention'].message).toMatch(/invalid duration/);
    expect(byPath['pipelines[0].store.kind']).toBeDefined();
    expect(ps.length).toBeGreaterThanOrEqual(5);
  });

  it('interpolates ${ENV} and ${ENV:-default}, keeps plain scalars typed, reports missing variables', () => {
    const c = parseConfig(base.replace('127.0.0.1:9092', '"${BROKER}"') + 'worker:\n  http:\n    port: ${PORT:-8181}\n', {
      env: { BROKER: 'b:1' },
    });
    expect(c.kafka.brokers).toEqual(['b:1']);
    expect(c.worker.http.port).toBe(8181);
    const ps = problems(base.replace('127.0.0.1:9092', '"${NOPE}"'));
    expect(ps[0].path).toBe('kafka.brokers[0]');
    expect(ps[0].message).toMatch(/NOPE is not set/);
  });

  it('cross-checks dependsOn, duplicate names, registry and DLQ requirements', () => {
    const ps = problems(`
kafka: { brokers: [a:1] }
cassandra: { contactPoints: [b:1] }
pipelines:
  - name: a
    topics: [t]
    valueConverter: avro
    store: { name: s }
    dependsOn: [b, zz]
    errors: { tolerance: all }
  - name: b
    topics: [t2]
    store: { name: s }
`);
    const msgs = ps.map((p) => `${p.path}: ${p.message}`).join('\n');
    expect(msgs).toMatch(/dependsOn\[0\]: pipeline "b" is not a bootstrap pipeline/);
    expect(msgs).toMatch(/dependsOn\[1\]: unknown pipeline "zz"/);
    expect(msgs).toMatch(/valueConverter: avro converter needs/);
    expect(msgs).toMatch(/tolerance "all" requires errors.deadLetterQueue/);
    expect(msgs).toMatch(/store "s" is already written/);
  });

  it('rejects CQL injection in table options with the YAML path, before anything connects', () => {
    const ps = problems(
      base.replace(
        'store: { name: rates }',
        'store: { name: rates, tableOptions: { compaction: { class: "LeveledCompactionStrategy\'}; DROP TABLE x; --" } } }',
      ),
    );
    expect(ps[0].path).toBe('pipelines[0].store.tableOptions');
    expect(ps[0].line).toBe(9);
  });

  it('takes the edge layout for versioned global stores only, without typed columns', () => {
    expect(parseConfig(base.replace('store: { name: rates }', 'store: { name: rates, layout: edges }')).pipelines[0].store.layout).toBe(
      'edges',
    );
    expect(parseConfig(base).pipelines[0].store.layout).toBe('rows');
    const partitioned = problems(base.replace('store: { name: rates }', 'store: { name: rates, layout: edges, scope: partitioned }'));
    expect(partitioned.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'pipelines[0].store.layout: layout edges applies to versioned stores of global scope',
    ]);
    const typed = problems(base.replace('store: { name: rates }', 'store: { name: rates, layout: edges, columns: { rate: decimal } }'));
    expect(typed.map((p) => p.path)).toContain('pipelines[0].store.layout');
  });

  it('reports schema and cross-field problems in one round', () => {
    const ps = problems(`
kafka: { brokers: [a:1], bogus: 1 }
cassandra: { contactPoints: [b:1] }
pipelines:
  - name: a
    topics: [t]
    store: { name: s }
    dependsOn: [nope]
`);
    const paths = ps.map((p) => p.path);
    expect(paths).toContain('kafka');
    expect(paths).toContain('pipelines[0].dependsOn[0]');
  });

  it('refuses prototype segments in every field path, naming the YAML path and line', () => {
    const ps = problems(`
kafka: { brokers: [a:1] }
cassandra: { contactPoints: [b:1] }
pipelines:
  - name: a
    topics: [t]
    store: { name: s }
    extract:
      key: { from: value, fields: [id, "__proto__.x"] }
      value:
        project: [ok, constructor.prototype.isAdmin]
      timestamp: { from: field, path: 'a["prototype"]' }
      filter: [{ path: constructor, exists: true }]
`);
    const byPath = Object.fromEntries(ps.map((p) => [p.path, p]));
    for (const path of [
      'pipelines[0].extract.key.fields[1]',
      'pipelines[0].extract.value.project[1]',
      'pipelines[0].extract.timestamp.path',
      'pipelines[0].extract.filter[0].path',
    ]) {
      expect(byPath[path]?.message).toMatch(/not allowed \(it would reach a prototype\)/);
    }
    expect(byPath['pipelines[0].extract.value.project[1]'].line).toBe(11);
    expect(ps).toHaveLength(4);
  });

  it('rejects store names that map to the same Cassandra table, naming both stores and YAML paths', () => {
    const long = 'orders_by_customer_and_region_projection_';
    const ps = problems(`
kafka: { brokers: [a:1] }
cassandra: { contactPoints: [b:1] }
pipelines:
  - { name: p1, topics: [t1], store: { name: a.b } }
  - { name: p2, topics: [t2], store: { name: A_b } }
  - { name: p3, topics: [t3], store: { name: ${long}x } }
  - { name: p4, topics: [t4], store: { name: ${long}y } }
  - { name: p5, topics: [t5], store: { name: a-B } }
`);
    expect(ps.map((p) => [p.path, p.message])).toEqual([
      [
        'pipelines[1].store.name',
        'store "A_b" and store "a.b" (pipelines[0].store.name) both map to Cassandra table "a_b"; rename one of them',
      ],
      [
        'pipelines[4].store.name',
        'store "a-B" and store "a.b" (pipelines[0].store.name) both map to Cassandra table "a_b"; rename one of them',
      ],
    ]);
    expect(ps[0].line).toBe(6);
  });

  it('a secret that YAML reads as an alias, a tag or a block scalar is reported by its path and line, never echoed', () => {
    const withPassword = (pw: string) =>
      base.replace(
        '  brokers: [127.0.0.1:9092]',
        `  brokers: [127.0.0.1:9092]\n  sasl: { mechanism: plain, username: u, password: ${pw} }`,
      );
    const block = base.replace(
      '  brokers: [127.0.0.1:9092]',
      '  brokers: [127.0.0.1:9092]\n  sasl:\n    mechanism: plain\n    password: |Sup3rS3cret',
    );
    for (const [text, expected] of [
      [withPassword('*Sup3rS3cret'), { path: 'kafka.sasl.password', message: expect.stringMatching(/YAML alias.*quote the value/) }],
      [withPassword('!Sup3rS3cret x'), { message: expect.stringMatching(/YAML tag.*quote the value/) }],
      [block, { message: expect.stringMatching(/^YAML syntax: Block scalar header includes extra characters$/) }],
    ] as const) {
      const found = problems(text);
      expect(found).toEqual([expect.objectContaining({ ...expected, line: expect.any(Number) })]);
      expect(JSON.stringify(found)).not.toContain('Sup3r');
    }
  });

  it('an unquoted ${VAR} that looks like a number keeps its text where the schema wants text (a password 007), and stays a number elsewhere', () => {
    const text = base.replace(
      '  brokers: [127.0.0.1:9092]',
      '  brokers: [127.0.0.1:9092]\n  sasl:\n    mechanism: plain\n    username: u\n    password: ${PW}\nworker:\n  http:\n    port: ${PORT}',
    );
    for (const pw of ['007', 'true', '12345678']) {
      const c = parseConfig(text, { env: { PW: pw, PORT: '8090' } });
      expect(c.kafka.sasl).toMatchObject({ password: pw });
      expect(c.worker.http.port).toBe(8090);
    }
    const literal = problems(text.replace('${PW}', '12345678'), { PORT: '8090' });
    expect(literal).toEqual([
      expect.objectContaining({ path: 'kafka.sasl.password', message: expect.stringContaining('quote the value') }),
    ]);
  });

  it('an alias bomb is refused as a configuration problem', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
    ].join('\n');
    expect(problems(`${base}\n${bomb}\n`)).toEqual([expect.objectContaining({ message: expect.stringMatching(/aliases expand too far/) })]);
  });

  it('NetworkTopologyStrategy needs at least one data center', () => {
    const text = base.replace(
      '  contactPoints: [127.0.0.1:9042]',
      '  contactPoints: [127.0.0.1:9042]\n  replication: { class: NetworkTopologyStrategy, dataCenters: {} }',
    );
    expect(problems(text)).toEqual([expect.objectContaining({ path: 'cassandra.replication.dataCenters' })]);
  });

  it('rejects YAML syntax errors with a line', () => {
    const ps = problems('kafka: [\n');
    expect(ps[0].message).toMatch(/YAML syntax/);
  });

  it('exports a JSON Schema with the pipeline properties', () => {
    const s = JSON.stringify(configJsonSchema());
    expect(s).toContain('historyRetention');
    expect(s).toContain('deadLetterQueue');
  });

  it('parses durations and escapes', () => {
    expect(parseDurationMs('7d')).toBe(7 * 86_400_000);
    expect(parseDurationMs('250ms')).toBe(250);
    expect(parseDurationMs('x')).toBeNull();
    expect(interpolateEnv('$${A}', { A: 'x' }).value).toBe('${A}');
  });
});
