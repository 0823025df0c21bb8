import { Client, tracker } from 'cassandra-driver';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { Serde, StoreScope } from '../../../src/store/types';
import { cleanUp, createKeyspace, newCassandraClient, uniqueName } from '../helpers';

// The driver checks `instanceof RequestTracker` at runtime, but its typings declare an interface.
const TrackerBase = (tracker as unknown as { RequestTracker: new () => object }).RequestTracker;

/** Counts requests actually sent to Cassandra (prepares and control-connection queries are not counted). */
export class CountingTracker extends TrackerBase implements tracker.RequestTracker {
  readonly queries: string[] = [];
  onSuccess(_host: unknown, query: unknown): void {
    this.record(query);
  }
  onError(_host: unknown, query: unknown): void {
    this.record(query);
  }
  /** Requests since the last reset, split into reads and writes. */
  counts(): { reads: number; writes: number; total: number } {
    const reads = this.queries.filter((q) => /^\s*SELECT/i.test(q)).length;
    return { reads, writes: this.queries.length - reads, total: this.queries.length };
  }
  shutdown(): void {}
  reset(): void {
    this.queries.length = 0;
  }
  private record(query: unknown): void {
    if (Array.isArray(query)) this.queries.push(`BATCH(${query.length})`);
    else this.queries.push(String(query));
  }
}

/** A connected client with a counting request tracker. */
export async function countingClient(): Promise<{ client: Client; tracker: CountingTracker }> {
  const ep = stackEndpoints();
  const t = new CountingTracker();
  const client = new Client({
    contactPoints: ep.cassandraContactPoints,
    protocolOptions: { port: ep.cassandraPort },
    localDataCenter: ep.localDataCenter,
    requestTracker: t,
  });
  await client.connect();
  return { client, tracker: t };
}

/** A string serde that prefixes keys with a namespace, so tests can share one table without seeing each other. */
export function namespacedStringSerde(ns: string): Serde<string> {
  const prefix = Buffer.from(`${ns}\u0000`, 'utf8');
  return {
    name: 'string',
    serialize(value: string): Buffer {
      if (typeof value !== 'string') throw new TypeError(`expected a string, got ${typeof value}`);
      return Buffer.concat([prefix, Buffer.from(value, 'utf8')]);
    },
    deserialize(bytes: Buffer): string {
      return bytes.subarray(prefix.length).toString('utf8');
    },
  };
}

/** A Cassandra client and a keyspace name for one test file; the keyspace is dropped afterwards. */
export interface StoreKeyspace {
  keyspace: string;
  client: Client;
  /** Set when the client counts requests (`counting: true`). */
  tracker: CountingTracker;
}

/** Registers the hooks that open a client (optionally counting requests) and drop the file's keyspace at the end. */
export function useStoreKeyspace(prefix: string, opts: { counting?: boolean } = {}): StoreKeyspace {
  const ks = { keyspace: uniqueName(prefix) } as StoreKeyspace;
  beforeAll(async () => {
    if (opts.counting) Object.assign(ks, await countingClient());
    else ks.client = await newCassandraClient();
  });
  afterAll(() =>
    cleanUp(
      () => ks.client?.execute(`DROP KEYSPACE IF EXISTS ${ks.keyspace}`),
      () => ks.client?.shutdown(),
    ),
  );
  return ks;
}

/** Options that isolate store instance `n` in a shared table: its own partition (partitioned scope), writer and key namespace. */
export function isolatedStore(
  scope: StoreScope,
  n: number,
  ns: string,
): { scope: StoreScope; partition: number | undefined; writerId: string; keySerde: Serde<string> } {
  return { scope, partition: scope === 'partitioned' ? n : undefined, writerId: `w${n}`, keySerde: namespacedStringSerde(`${ns}${n}`) };
}

/**
 * Creates a partitioned table in the layout adjunct created before key-hash buckets (one Cassandra partition per
 * source partition), with the statement that version ran, so tests can check that such tables keep working.
 */
export async function createUnbucketedTable(client: Client, keyspace: string, table: string, kind: 'versioned' | 'kv'): Promise<void> {
  await createKeyspace(client, keyspace);
  await client.execute(
    kind === 'versioned'
      ? `CREATE TABLE IF NOT EXISTS ${keyspace}.${table} (partition int, key blob, valid_from bigint, value blob, writer text, PRIMARY KEY ((partition), key, valid_from)) WITH CLUSTERING ORDER BY (key ASC, valid_from DESC)`
      : `CREATE TABLE IF NOT EXISTS ${keyspace}.${table} (partition int, key blob, value blob, PRIMARY KEY ((partition), key)) WITH CLUSTERING ORDER BY (key ASC)`,
  );
}

/**
 * Creates a global versioned table in the layout adjunct created before the writer became a clustering column (`writer`
 * a regular cell), with the statement that version ran, so tests can check that such tables keep working.
 */
export async function createWriterCellTable(client: Client, keyspace: string, table: string): Promise<void> {
  await createKeyspace(client, keyspace);
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${keyspace}.${table} (key blob, valid_from bigint, value blob, writer text, PRIMARY KEY ((key), valid_from)) WITH CLUSTERING ORDER BY (valid_from DESC)`,
  );
}

/** The partition key columns of a table, from system_schema (in key order). */
export async function partitionKeyOf(client: Client, keyspace: string, table: string): Promise<string[]> {
  const rs = await client.execute(
    'SELECT column_name, kind, position FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
    [keyspace, table],
  );
  return rs.rows
    .filter((r) => r.kind === 'partition_key')
    .sort((a, b) => Number(a.position) - Number(b.position))
    .map((r) => String(r.column_name));
}
