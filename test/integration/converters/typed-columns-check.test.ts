import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { stringify } from 'yaml';
import { parseConfig } from '../../../src/config';
import { checkTypedColumnsAgainstRegistry } from '../../../src/converters/typed-columns-check';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { newRegistry, uniqueName } from '../helpers';

describe('adjunct validate --registry: typed-column mappings checked against the real registry', () => {
  it('reports explicit columns the latest schema lacks or cannot fill, and schema fields that cannot be columns', async () => {
    const registry = newRegistry();
    const topic = uniqueName('fit').replace(/_/g, '-');
    const bad = uniqueName('fitbad').replace(/_/g, '-');
    const schema = {
      type: 'record',
      name: 'Rate',
      fields: [
        { name: 'currency', type: 'string' },
        { name: 'rate', type: 'double' },
        { name: 'bid', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 4 } },
        { name: 'ts', type: 'long' },
        { name: 'tags', type: { type: 'array', items: 'string' } },
      ],
    };
    await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: `${topic}-value` });
    await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify({ type: 'record', name: 'R', fields: [{ name: 'value', type: 'string' }] }) },
      { subject: `${bad}-value` },
    );
    const ep = stackEndpoints();
    const cfg = parseConfig(
      stringify({
        kafka: { brokers: ep.kafkaBrokers },
        cassandra: { contactPoints: ['127.0.0.1:9042'] },
        registry: { url: ep.registryUrl },
        pipelines: [
          {
            name: 'ok',
            topics: [topic],
            valueConverter: 'avro',
            store: { name: 'ok', columns: { rate: 'decimal', currency: 'text', ts: 'timestamp' } },
          },
          {
            name: 'misfit',
            topics: [topic],
            valueConverter: 'avro',
            store: { name: 'misfit', columns: { rate: 'text', bid: 'decimal', tags: 'text', nope: 'int' } },
          },
          { name: 'names', topics: [bad], valueConverter: 'avro', store: { name: 'names', typed: true } },
          {
            name: 'missing',
            topics: [uniqueName('nosubject').replace(/_/g, '-')],
            valueConverter: 'avro',
            store: { name: 'missing', typed: true },
          },
        ],
      }),
      { env: {} },
    );
    const problems = await checkTypedColumnsAgainstRegistry(cfg);
    const by = (prefix: string) => problems.filter((p) => p.path.startsWith(prefix)).map((p) => `${p.path}: ${p.message}`);
    expect(by('pipelines[0]')).toEqual([]);
    expect(by('pipelines[1]')).toEqual([
      expect.stringMatching(
        /^pipelines\[1\]\.store\.columns\.rate: "rate" is double in subject .* version 1 \(schema id \d+\); its values do not fit CQL type text$/,
      ),
      expect.stringMatching(/^pipelines\[1\]\.store\.columns\.bid: "bid" is decimal .*needs typed: true/),
      expect.stringMatching(/^pipelines\[1\]\.store\.columns\.tags: "tags" is not a scalar field/),
      expect.stringMatching(/^pipelines\[1\]\.store\.columns\.nope: "nope" is not a field of subject/),
    ]);
    expect(by('pipelines[2]')).toEqual([
      expect.stringMatching(
        /^pipelines\[2\]\.store\.typed: subject .*: field "value": column name "value" is a column of the versioned layout/,
      ),
    ]);
    expect(by('pipelines[3]')).toEqual([expect.stringMatching(/cannot check typed columns against subject .*: .*no latest version/)]);
  });
});
