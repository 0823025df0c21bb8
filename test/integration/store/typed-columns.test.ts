import { Client } from 'cassandra-driver';
import { AdjunctError } from '../../../src/errors';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { ColumnSchema, ColumnSource } from '../../../src/store/cassandra/typed-columns';
import { jsonSerde } from '../../../src/store/serde';
import { createKeyspace, newCassandraClient, uniqueName } from '../helpers';
import { countingClient, CountingTracker } from './support';

/** A schema source whose answer the test changes, as a registry subject evolves. */
class SettableSource implements ColumnSource {
  describes = 0;
  constructor(public schema: ColumnSchema) {}
  async describe(): Promise<ColumnSchema> {
    this.describes++;
    return this.schema;
  }
}

describe('typed columns on a versioned Cassandra table (real Cassandra)', () => {
  let client: Client;
  let tracker: CountingTracker;
  let other: Client;
  const keyspace = uniqueName('typed_store');

  beforeAll(async () => {
    ({ client, tracker } = await countingClient());
    other = await newCassandraClient();
    await createKeyspace(client, keyspace);
  });
  afterAll(async () => {
    await Promise.all([client.shutdown(), other.shutdown()]);
  });

  const open = (table: string, typed: Parameters<typeof openCassandraVersionedStore>[0]['typed']) =>
    openCassandraVersionedStore<string, Record<string, unknown>>({
      client,
      keyspace,
      storeName: table,
      scope: 'global',
      historyRetentionMs: 1_000_000,
      valueSerde: jsonSerde(),
      typed,
    });

  it('an explicit mapping costs still one write per record; tombstones null every typed column; bad values name the field', async () => {
    const store = await open('explicit', {
      columns: [
        { field: 'rate', column: 'rate', type: 'decimal' },
        { field: 'sourceName', column: 'source_name', type: 'text' },
      ],
    });
    tracker.reset();
    await store.write('EUR', { rate: '1.2345', sourceName: 'ecb', extra: [1] }, 1000);
    await store.write('EUR', null, 2000);
    expect(tracker.counts()).toEqual({ reads: 0, writes: 2, total: 2 });
    const rows = (
      await client.execute(`SELECT valid_from, rate, source_name, value FROM ${keyspace}.explicit WHERE key = ?`, [Buffer.from('EUR')])
    ).rows;
    expect(rows.map((r) => [Number(r.get('valid_from')), r.get('rate')?.toString() ?? null, r.get('source_name')])).toEqual([
      [2000, null, null],
      [1000, '1.2345', 'ecb'],
    ]);
    // The library reads the value blob exactly as before.
    expect((await store.get('EUR', 1500))?.value).toEqual({ rate: '1.2345', sourceName: 'ecb', extra: [1] });
    await expect(store.write('USD', { rate: { evil: '1); DROP TABLE x; --' } }, 3000)).rejects.toMatchObject({
      code: 'TYPED_COLUMN_MISMATCH',
      message: expect.stringMatching(/field "rate" does not fit typed column rate/),
    });
    expect((await client.execute(`SELECT key FROM ${keyspace}.explicit WHERE key = ?`, [Buffer.from('USD')])).rowLength).toBe(0);
  });

  it('key columns: the whole key, or the elements of a composite (tuple) key, also on tombstones', async () => {
    const { tupleKeySerde } = await import('../../../src/store/serde');
    const scalar = await open('keyed', {
      columns: [{ field: 'rate', column: 'rate', type: 'double' }],
      keyColumns: [{ field: 'currency', column: 'key_currency', type: 'text' }],
    });
    await scalar.write('EUR', { rate: 1.1 }, 1000);
    await scalar.write('EUR', null, 2000);
    const rows = (await client.execute(`SELECT valid_from, key_currency, rate FROM ${keyspace}.keyed WHERE key = textAsBlob('EUR')`)).rows;
    expect(rows.map((r) => [Number(r.get('valid_from')), r.get('key_currency'), r.get('rate')])).toEqual([
      [2000, 'EUR', null],
      [1000, 'EUR', 1.1],
    ]);
    const composite = await openCassandraVersionedStore<unknown[], Record<string, unknown>>({
      client,
      keyspace,
      storeName: 'composite',
      scope: 'global',
      historyRetentionMs: 1_000_000,
      keySerde: tupleKeySerde as never,
      valueSerde: jsonSerde(),
      typed: {
        columns: [],
        keyColumns: [
          { field: 'region', column: 'key_region', type: 'text', index: 0 },
          { field: 'sku', column: 'key_sku', type: 'bigint', index: 1 },
        ],
      },
    });
    await composite.write(['eu', 42], { price: 3 }, 1000);
    const row = (await client.execute(`SELECT key_region, key_sku FROM ${keyspace}.composite`)).first();
    expect([row.get('key_region'), row.get('key_sku').toString()]).toEqual(['eu', '42']);
    await expect(composite.write(['eu', 'not a number'], { price: 3 }, 2000)).rejects.toMatchObject({
      code: 'TYPED_COLUMN_MISMATCH',
      message: expect.stringMatching(/key field "sku" does not fit typed column key_sku/),
    });
  });

  it('invalid mappings are refused before any CQL is sent', async () => {
    tracker.reset();
    await expect(open('refused', { columns: [{ field: 'x', column: 'x text); DROP TABLE y; --', type: 'text' }] })).rejects.toMatchObject({
      code: 'INVALID_IDENTIFIER',
    });
    await expect(open('refused', { columns: [{ field: 'x', column: 'x', type: 'text, y int' as 'text' }] })).rejects.toMatchObject({
      code: 'INVALID_IDENTIFIER',
    });
    expect(tracker.counts().total).toBe(0);
  });

  it('schema evolution: concurrent writers add a new column race-free; a type change fails naming the field', async () => {
    const v1: ColumnSchema = { columns: [{ field: 'rate', column: 'rate', type: 'double' }], unmapped: ['tags'], origin: 'v1' };
    const a = new SettableSource(v1);
    const b = new SettableSource(v1);
    // Two clients, as two worker processes: their ALTERs race, and the loser tolerates "already exists".
    const [sa, sb] = await Promise.all([
      openCassandraVersionedStore<string, Record<string, unknown>>({
        client,
        keyspace,
        storeName: 'evolving',
        scope: 'partitioned',
        partition: 0,
        historyRetentionMs: 1_000_000,
        valueSerde: jsonSerde(),
        typed: { source: a },
      }),
      openCassandraVersionedStore<string, Record<string, unknown>>({
        client: other,
        keyspace,
        storeName: 'evolving',
        scope: 'partitioned',
        partition: 1,
        historyRetentionMs: 1_000_000,
        valueSerde: jsonSerde(),
        typed: { source: b },
      }),
    ]);
    await sa.write('EUR', { rate: 1.1, tags: ['x'] }, 1000);
    expect(a.describes).toBe(1); // known fields: no re-read
    const v2: ColumnSchema = {
      columns: [...v1.columns, { field: 'source', column: 'source', type: 'text' }],
      unmapped: ['tags'],
      origin: 'v2',
    };
    a.schema = v2;
    b.schema = v2;
    await Promise.all([
      sa.write('EUR', { rate: 1.2, source: 'ecb' }, 2000),
      sa.write('GBP', { rate: 0.8 }, 2000),
      sb.write('USD', { rate: 0.9, source: 'fed' }, 2000),
    ]);
    const rows = (await client.execute(`SELECT partition, key, valid_from, rate, source FROM ${keyspace}.evolving`)).rows;
    expect(
      rows
        .map(
          (r) => `${r.get('partition')}:${(r.get('key') as Buffer).toString()}@${r.get('valid_from')}=${r.get('rate')}/${r.get('source')}`,
        )
        .sort(),
    ).toEqual(['0:EUR@1000=1.1/null', '0:EUR@2000=1.2/ecb', '0:GBP@2000=0.8/null', '1:USD@2000=0.9/fed']);
    // An unknown field the schema does not name triggers one re-read, then stays in the value blob only.
    await sa.write('EUR', { rate: 1.3, note: 'n' }, 3000);
    await sa.write('EUR', { rate: 1.4, note: 'n' }, 4000);
    expect(a.describes).toBe(3);
    a.schema = {
      columns: [{ field: 'rate', column: 'rate', type: 'text' }, v2.columns[1]],
      unmapped: [],
      origin: 'subject rates-value version 3',
    };
    await expect(sa.write('EUR', { rate: 'high' }, 5000)).rejects.toMatchObject({
      code: 'TYPED_COLUMN_INCOMPATIBLE',
      message: expect.stringMatching(
        /field "rate": column rate of .*evolving is double, but subject rates-value version 3 maps it to text/,
      ),
    });
    // Values that still fit keep being written.
    await sa.write('EUR', { rate: 1.5 }, 6000);
    expect((await sa.get('EUR'))?.value).toEqual({ rate: 1.5 });
  });

  it('a registry outage while a new field is resolved is retried under the write retry policy, never the record failing', async () => {
    const v1: ColumnSchema = { columns: [{ field: 'rate', column: 'rate', type: 'double' }], unmapped: [], origin: 'v1' };
    const v2: ColumnSchema = { columns: [...v1.columns, { field: 'source', column: 'source', type: 'text' }], unmapped: [], origin: 'v2' };
    /** The registry answers the first re-read with an outage (as RegistryColumnSource does for a 5xx or a broken body). */
    class FlakySource extends SettableSource {
      outages = 1;
      override async describe(): Promise<ColumnSchema> {
        if (this.describes > 0 && this.outages-- > 0) {
          this.describes++;
          throw new AdjunctError('schema registry unavailable', { code: 'REGISTRY_UNAVAILABLE', retriable: true, stage: 'write' });
        }
        return super.describe();
      }
    }
    const source = new FlakySource(v1);
    const retries: unknown[] = [];
    const store = await openCassandraVersionedStore<string, Record<string, unknown>>({
      client,
      keyspace,
      storeName: 'flaky_registry',
      scope: 'global',
      historyRetentionMs: 1_000_000,
      valueSerde: jsonSerde(),
      typed: { source },
      retry: { timeoutMs: 10_000, maxDelayMs: 200, onRetry: (e) => retries.push(e) },
    });
    await store.write('EUR', { rate: 1.1 }, 1000);
    source.schema = v2;
    await store.write('EUR', { rate: 1.2, source: 'ecb' }, 2000);
    expect(retries).toEqual([expect.objectContaining({ code: 'REGISTRY_UNAVAILABLE' })]);
    expect(source.describes).toBe(3); // the first describe, the outage, the retry
    const rows = (await client.execute(`SELECT valid_from, source FROM ${keyspace}.flaky_registry`)).rows;
    expect(rows.map((r) => `${r.get('valid_from')}=${r.get('source')}`).sort()).toEqual(['1000=null', '2000=ecb']);
  });
  it('a put that waits for a schema re-read is not overtaken by a later put of the same key and timestamp', async () => {
    const v1: ColumnSchema = { columns: [{ field: 'rate', column: 'rate', type: 'double' }], unmapped: [], origin: 'v1' };
    /** A registry whose first re-read is an outage (retried under the write policy), so the later put resolves first. */
    class FlakySource extends SettableSource {
      override async describe(): Promise<ColumnSchema> {
        if (this.describes++ === 1) {
          throw new AdjunctError('schema registry unavailable', { code: 'REGISTRY_UNAVAILABLE', retriable: true, stage: 'write' });
        }
        return this.schema;
      }
    }
    const source = new FlakySource(v1);
    const store = await openCassandraVersionedStore<string, Record<string, unknown>>({
      client,
      keyspace,
      storeName: 'same_timestamp',
      scope: 'global',
      historyRetentionMs: 1_000_000,
      valueSerde: jsonSerde(),
      typed: { source },
      retry: { timeoutMs: 10_000, maxDelayMs: 200 },
    });
    source.schema = { columns: [...v1.columns, { field: 'source', column: 'source', type: 'text' }], unmapped: [], origin: 'v2' };
    // KIP-889: the second put of EUR@1000 replaces the first.
    await Promise.all([store.write('EUR', { rate: 1.1, source: 'ecb' }, 1000), store.write('EUR', { rate: 1.2 }, 1000)]);
    expect(source.describes).toBe(3); // the first describe, the outage, the retry
    expect((await store.get('EUR', 1000))?.value).toEqual({ rate: 1.2 });
    const rows = (await client.execute(`SELECT valid_from, rate, source FROM ${keyspace}.same_timestamp`)).rows;
    expect(rows.map((r) => `${r.get('valid_from')}=${r.get('rate')}/${r.get('source')}`)).toEqual(['1000=1.2/null']);
  });
});
