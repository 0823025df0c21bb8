import { ConfigValidationError, parseConfig } from '../../src/config';

const doc = (store: string, pipeline = '    valueConverter: json', extra = '') => `
kafka:
  brokers: [127.0.0.1:9092]
cassandra:
  contactPoints: [127.0.0.1:9042]
${extra}
pipelines:
  - name: rates
    topics: [rates]
${pipeline}
    store: ${store}
`;

function problems(text: string): { path: string; message: string }[] {
  try {
    parseConfig(text, { env: {} });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigValidationError);
    return (e as ConfigValidationError).problems;
  }
  throw new Error('expected the config to be rejected');
}

describe('config: typed columns (store.columns / store.typed)', () => {
  it('accepts an explicit mapping and typed: true with a registry value converter', () => {
    const c = parseConfig(doc('{ name: rates, columns: { rate: decimal, source: text, validAt: timestamp } }'), { env: {} });
    expect(c.pipelines[0].store.columns).toEqual({ rate: 'decimal', source: 'text', validAt: 'timestamp' });
    const t = parseConfig(doc('{ name: rates, typed: true }', '    valueConverter: avro', 'registry: { url: "http://127.0.0.1:8081" }'), {
      env: {},
    });
    expect(t.pipelines[0].store.typed).toBe(true);
  });

  it('rejects unknown CQL types, invalid or reserved names and duplicate columns, naming the field', () => {
    const ps = problems(
      doc(
        '{ name: rates, columns: { rate: "decimal); DROP TABLE x; --", "bad name": text, value: double, writer: text, select: int, fooBar: int, foo_bar: int } }',
      ),
    );
    const at = (f: string) =>
      ps
        .filter((p) => p.path === `pipelines[0].store.columns.${f}`)
        .map((p) => p.message)
        .join(' | ');
    expect(at('rate')).toMatch(/unknown CQL type/);
    expect(at('bad name')).toMatch(/must match/);
    expect(at('value')).toMatch(/column of the versioned layout/);
    expect(at('writer')).toMatch(/column of the versioned layout/);
    expect(at('select')).toMatch(/reserved CQL keyword/);
    expect(at('foo_bar')).toMatch(/also the column of field "fooBar"/);
  });

  it('rejects typed columns on kv stores, non-json value serdes, both modes at once and fields dropped by the projection', () => {
    expect(
      problems(doc('{ name: rates, kind: kv, columns: { rate: double } }'))
        .map((p) => p.message)
        .join(),
    ).toMatch(/versioned stores only/);
    expect(
      problems(doc('{ name: rates, valueSerde: string, columns: { rate: double } }'))
        .map((p) => p.message)
        .join(),
    ).toMatch(/valueSerde must be json/);
    expect(
      problems(
        doc(
          '{ name: rates, typed: true, columns: { rate: double } }',
          '    valueConverter: avro',
          'registry: { url: "http://127.0.0.1:8081" }',
        ),
      )
        .map((p) => p.message)
        .join(),
    ).toMatch(/not both/);
    const proj = problems(doc('{ name: rates, columns: { rate: double, source: text } }', '    extract: { value: { project: [rate] } }'));
    expect(proj).toEqual([
      expect.objectContaining({
        path: 'pipelines[0].store.columns.source',
        message: expect.stringMatching(/not kept by extract.value.project/),
      }),
    ]);
  });

  it('rejects typed: true without a registry value converter or with a value path', () => {
    expect(
      problems(doc('{ name: rates, typed: true }'))
        .map((p) => p.message)
        .join(),
    ).toMatch(/valueConverter json has none/);
    const ps = problems(
      doc(
        '{ name: rates, typed: true }',
        '    valueConverter: avro\n    extract: { value: { path: after } }',
        'registry: { url: "http://127.0.0.1:8081" }',
      ),
    );
    expect(ps.map((p) => p.message).join()).toMatch(/explicit columns mapping/);
  });
});

describe('config: typed key columns (store.keyColumns)', () => {
  it('accepts one column for a scalar key and columns named after the fields of a composite key', () => {
    expect(parseConfig(doc('{ name: rates, keyColumns: { currency: text } }'), { env: {} }).pipelines[0].store.keyColumns).toEqual({
      currency: 'text',
    });
    const c = parseConfig(
      doc(
        '{ name: rates, keyColumns: { region: text, sku: bigint }, columns: { sku: bigint } }',
        '    extract: { key: { from: value, fields: [region, sku] } }',
      ),
      { env: {} },
    );
    expect(c.pipelines[0].store.keyColumns).toEqual({ region: 'text', sku: 'bigint' });
  });

  it('rejects several columns for a scalar key, names outside the composite key and bad types', () => {
    expect(problems(doc('{ name: rates, keyColumns: { a: text, b: text } }'))).toEqual([
      expect.objectContaining({
        path: 'pipelines[0].store.keyColumns.b',
        message: expect.stringMatching(/a scalar key has one key column/),
      }),
    ]);
    const ps = problems(
      doc(
        '{ name: rates, keyColumns: { region: text, color: text, sku: "int; DROP" } }',
        '    extract: { key: { from: value, fields: [region, sku] } }',
      ),
    );
    expect(ps.map((p) => `${p.path}: ${p.message}`).sort()).toEqual([
      expect.stringMatching(/^pipelines\[0\]\.store\.keyColumns\.color: is not one of the composite key's fields \[region, sku\]/),
      expect.stringMatching(/^pipelines\[0\]\.store\.keyColumns\.sku: unknown CQL type/),
    ]);
  });
});
