import { Client } from 'cassandra-driver';
import { InvalidIdentifierError, isMissingTable, isTableNotOpenYet, sleep, StoreError } from '../../errors';
import { CqlExecutor } from './cql-executor';
import { qualified } from './layout';

/** Replication of an auto-created keyspace. */
export type ReplicationOptions =
  { class: 'SimpleStrategy'; replicationFactor?: number } | { class: 'NetworkTopologyStrategy'; datacenters: Record<string, number> };

/** What to create when opening a store. */
export interface SchemaOptions {
  /** Create the keyspace if missing (default true); when false a missing keyspace is a KEYSPACE_NOT_FOUND StoreError. */
  autoCreate?: boolean;
  /** Create missing tables (default true); when false a missing table is a TABLE_NOT_FOUND StoreError. */
  createTables?: boolean;
  /**
   * The store's table must already exist (default false): a missing one is a retriable TABLE_MISSING StoreError, never
   * created. For writers of a generation that readers already read: re-creating its table empty would serve a partial
   * store as if whole.
   */
  tableMustExist?: boolean;
  /** Replication of an auto-created keyspace (default SimpleStrategy, RF 1). */
  replication?: ReplicationOptions;
  /** Max time to wait for schema agreement after each DDL (default 30 s). */
  schemaAgreementTimeoutMs?: number;
}

/** Renders and validates the replication map (before any CQL is sent). */
export function renderReplication(r: ReplicationOptions | undefined): string {
  const rep = r ?? { class: 'SimpleStrategy' as const };
  const rf = (n: unknown, where: string): number => {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > 100) {
      throw new InvalidIdentifierError(`invalid replication factor at ${where}: ${JSON.stringify(n)}`, { option: where });
    }
    return n;
  };
  if (rep.class === 'SimpleStrategy') {
    return `{'class': 'SimpleStrategy', 'replication_factor': ${rf(rep.replicationFactor ?? 1, 'replication.replicationFactor')}}`;
  }
  if (rep.class === 'NetworkTopologyStrategy') {
    const entries = Object.entries(rep.datacenters ?? {});
    if (entries.length === 0)
      throw new InvalidIdentifierError('NetworkTopologyStrategy needs at least one datacenter', { option: 'replication.datacenters' });
    const parts = entries.map(([dc, n]) => {
      if (!/^[A-Za-z0-9_.-]+$/.test(dc)) {
        throw new InvalidIdentifierError(`invalid datacenter name ${JSON.stringify(dc)}`, { option: `replication.datacenters.${dc}` });
      }
      return `'${dc}': ${rf(n, `replication.datacenters.${dc}`)}`;
    });
    return `{'class': 'NetworkTopologyStrategy', ${parts.join(', ')}}`;
  }
  throw new InvalidIdentifierError(`unknown replication class ${JSON.stringify((rep as { class?: unknown }).class)}`, {
    option: 'replication.class',
  });
}

/** Polls the driver until all up hosts agree on the schema version, or the timeout passes. */
export async function awaitSchemaAgreement(client: Client, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // checkSchemaAgreement exists in driver 4.x but is missing from its typings.
    const metadata = client.metadata as unknown as { checkSchemaAgreement(): Promise<boolean> };
    if (await metadata.checkSchemaAgreement()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** In-process de-duplication of concurrent creations (per client, per object). */
const inFlight = new WeakMap<Client, Map<string, Promise<void>>>();

function once(client: Client, id: string, fn: () => Promise<void>): Promise<void> {
  let map = inFlight.get(client);
  if (map === undefined) {
    map = new Map();
    inFlight.set(client, map);
  }
  const existing = map.get(id);
  if (existing !== undefined) return existing;
  const p = fn().finally(() => map.delete(id));
  map.set(id, p);
  return p;
}

/** Tries of a usability probe, 100 ms apart. */
const USABLE_ATTEMPTS = 100;

/** What a coordinator answers for a column it does not know (yet); unknown tables are classified by isMissingTable. */
const UNDEFINED_COLUMN = /Undefined column name/i;

/** A coordinator's (or replica's) answer for a table or column it does not know yet. */
function notUsableYet(e: unknown): boolean {
  return isMissingTable(e) || isTableNotOpenYet(e) || UNDEFINED_COLUMN.test(String((e as Error)?.message));
}

/**
 * Runs `probe` (a read naming a table or columns) until the coordinator accepts it: an object another worker created
 * just now is listed in system_schema before the coordinator's in-memory schema has it, even after schema agreement.
 * Gives up after 10 s, or at once on any other error.
 */
export async function awaitUsable(exec: CqlExecutor, probe: string, what: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await exec.probe(probe, what, notUsableYet);
      return;
    } catch (e) {
      if (attempt >= USABLE_ATTEMPTS || !notUsableYet(e)) throw e;
    }
    await sleep(100);
  }
}

/** Tables each client has seen accept a statement (the usability probe runs once per table and client). */
const usable = new WeakMap<Client, Set<string>>();

/** Probes a table found in system_schema (but not created by this client) once per client, see awaitUsable. */
export async function awaitTableUsable(exec: CqlExecutor, ref: { keyspace: string; table: string }): Promise<void> {
  let seen = usable.get(exec.client);
  if (seen === undefined) usable.set(exec.client, (seen = new Set()));
  const name = qualified(ref);
  if (seen.has(name)) return;
  await awaitUsable(exec, `SELECT * FROM ${name} LIMIT 1`, `check table ${name} is usable`);
  seen.add(name);
}

async function keyspaceExists(exec: CqlExecutor, keyspace: string): Promise<boolean> {
  const rs = await exec.read('SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?', [keyspace], 'check keyspace');
  return rs.rowLength > 0;
}

/** True when `keyspace.table` exists in the schema the answering node holds (callers wait for agreement first where it matters). */
export async function tableExists(exec: CqlExecutor, keyspace: string, table: string): Promise<boolean> {
  const rs = await exec.read(
    'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
    [keyspace, table],
    `checking table ${keyspace}.${table}`,
  );
  return rs.rowLength > 0;
}

/**
 * True when `keyspace.table` exists as the nodes agree: a table the answering node holds is there; a missing one is asked
 * again once the nodes agree (bounded), and a disagreement past the bound is a retriable SCHEMA_DISAGREEMENT, never a
 * "missing" (a node that has not caught up must not make a table look dropped; a node that is down never hides one).
 */
export async function tableExistsAgreed(exec: CqlExecutor, keyspace: string, table: string, timeoutMs = 30_000): Promise<boolean> {
  if (await tableExists(exec, keyspace, table)) return true;
  await agree(exec, { schemaAgreementTimeoutMs: timeoutMs }, `checking table ${keyspace}.${table}`);
  return tableExists(exec, keyspace, table);
}

async function agree(exec: CqlExecutor, options: SchemaOptions, what: string): Promise<void> {
  if (!(await awaitSchemaAgreement(exec.client, options.schemaAgreementTimeoutMs))) {
    throw new StoreError(`no schema agreement after ${what}`, { code: 'SCHEMA_DISAGREEMENT', retriable: true, stage: 'schema' });
  }
}

/** Ensures the keyspace exists (creating it unless autoCreate is false). `replication` must be pre-rendered. */
export async function ensureKeyspace(exec: CqlExecutor, keyspace: string, replication: string, options: SchemaOptions): Promise<void> {
  if (await keyspaceExists(exec, keyspace)) return;
  if (options.autoCreate === false) {
    throw new StoreError(`keyspace ${keyspace} does not exist and autoCreate is false`, {
      code: 'KEYSPACE_NOT_FOUND',
      retriable: false,
      stage: 'schema',
      context: { keyspace },
    });
  }
  await once(exec.client, `ks:${keyspace}`, async () => {
    await exec.ddl(`CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = ${replication}`, `create keyspace ${keyspace}`);
    await agree(exec, options, `creating keyspace ${keyspace}`);
  });
}

/** Ensures a table exists (CREATE TABLE IF NOT EXISTS + schema agreement); all parts must be pre-validated. */
export async function ensureTable(
  exec: CqlExecutor,
  ref: { keyspace: string; table: string },
  ddl: { columns: string; clustering: string },
  withOptions: string[],
  options: SchemaOptions,
): Promise<void> {
  if (await tableExists(exec, ref.keyspace, ref.table)) return awaitTableUsable(exec, ref);
  if (options.tableMustExist) {
    throw new StoreError(`table ${qualified(ref)} does not exist (dropped, or not visible on this node yet): it is not re-created`, {
      code: 'TABLE_MISSING',
      retriable: true,
      stage: 'schema',
      context: { ...ref },
    });
  }
  if (options.createTables === false) {
    throw new StoreError(`table ${qualified(ref)} does not exist and createTables is false`, {
      code: 'TABLE_NOT_FOUND',
      retriable: false,
      stage: 'schema',
      context: { ...ref },
    });
  }
  const withParts = [ddl.clustering, ...withOptions].filter((p) => p !== '');
  const cql = `CREATE TABLE IF NOT EXISTS ${qualified(ref)} (${ddl.columns})${withParts.length ? ` WITH ${withParts.join(' AND ')}` : ''}`;
  await once(exec.client, `t:${qualified(ref)}`, async () => {
    await exec.ddl(cql, `create table ${qualified(ref)}`);
    await agree(exec, options, `creating table ${qualified(ref)}`);
  });
}

/** A column of a table as `system_schema.columns` lists it. */
export interface TableColumn {
  name: string;
  /** `partition_key`, `clustering`, `regular` or `static`. */
  kind: string;
  /** Position within the partition key or the clustering (-1 for other columns). */
  position: number;
  /** The declared CQL type, as Cassandra names it (varchar is text). */
  type: string;
}

/** Every column of a table (none when the table does not exist): one read of `system_schema.columns`. */
export async function tableColumns(exec: CqlExecutor, ref: { keyspace: string; table: string }, purpose: string): Promise<TableColumn[]> {
  const rs = await exec.read(
    'SELECT column_name, kind, position, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
    [ref.keyspace, ref.table],
    purpose,
  );
  return rs.rows.map((r) => ({ name: String(r.column_name), kind: String(r.kind), position: Number(r.position), type: String(r.type) }));
}

/**
 * Adds columns a table created by an older adjunct lacks (ALTER TABLE … ADD, then schema agreement). Names and types
 * come from the layout, never from configuration. With createTables false a missing column is a SCHEMA_OUTDATED error.
 * `existing` is the table's columns when the caller has just read them (otherwise they are read here). Returns the kind
 * of every column afterwards (`partition_key`, `clustering`, `regular`, `static`; added ones `regular`).
 */
export async function ensureColumns(
  exec: CqlExecutor,
  ref: { keyspace: string; table: string },
  columns: { name: string; type: string }[],
  options: SchemaOptions,
  existing?: TableColumn[],
): Promise<Map<string, string>> {
  const listed = existing ?? (await tableColumns(exec, ref, 'check columns'));
  const present = new Map(listed.map((c) => [c.name, c.kind]));
  for (const c of columns) {
    if (present.has(c.name)) continue;
    present.set(c.name, 'regular');
    if (options.createTables === false) {
      throw new StoreError(`table ${qualified(ref)} lacks column ${c.name} and createTables is false`, {
        code: 'SCHEMA_OUTDATED',
        retriable: false,
        stage: 'schema',
        context: { ...ref },
      });
    }
    await once(exec.client, `c:${qualified(ref)}.${c.name}`, async () => {
      try {
        await exec.ddl(`ALTER TABLE ${qualified(ref)} ADD ${c.name} ${c.type}`, `add column ${c.name} to ${qualified(ref)}`);
      } catch (e) {
        // Another worker added it first.
        if (
          !/already exist|conflicts with an existing column/i.test(
            e instanceof Error ? `${e.message} ${String((e as { cause?: Error }).cause?.message)}` : String(e),
          )
        )
          throw e;
      }
      await agree(exec, options, `adding column ${c.name} to ${qualified(ref)}`);
    });
  }
  return present;
}

/** The partition key columns of a table, in key order (empty when the table does not exist): one read. */
export async function tablePartitionKey(exec: CqlExecutor, ref: { keyspace: string; table: string }): Promise<string[]> {
  return partitionKeyOf(await tableColumns(exec, ref, 'read partition key'));
}

/** The partition key columns among a table's columns, in key order. */
export function partitionKeyOf(columns: TableColumn[]): string[] {
  return columns
    .filter((c) => c.kind === 'partition_key')
    .sort((a, b) => a.position - b.position)
    .map((c) => c.name);
}

/**
 * The layout of an existing partitioned table, from its columns: `buckets` when its Cassandra partition is
 * `(partition, bucket)`, undefined when it is the source partition alone (a table created before buckets keeps that layout).
 */
export function partitionedTableBuckets(
  ref: { keyspace: string; table: string },
  columns: TableColumn[],
  buckets: number | undefined,
): number | undefined {
  const key = partitionKeyOf(columns);
  if (key.length === 0)
    throw new StoreError(`table ${qualified(ref)} does not exist`, {
      code: 'TABLE_NOT_FOUND',
      retriable: false,
      stage: 'schema',
      context: { ...ref },
    });
  if (!key.includes('bucket')) return undefined;
  if (buckets === undefined) {
    throw new StoreError(`table ${qualified(ref)} is bucketed, but the number of buckets it was written with is not known`, {
      code: 'BUCKETS_UNKNOWN',
      retriable: false,
      stage: 'schema',
      context: { ...ref },
    });
  }
  return buckets;
}
