import { Client } from 'cassandra-driver';
import { AdjunctError, wrapCassandraError } from '../errors';
import { validateKeyspaceName } from '../store/cassandra';
import { KvReads } from './kv-reads';
import { LookupContext, orIfMissing } from './lookup-context';
import { invalidLookupArgument } from './lookup-error';
import { ReadinessChecker, WaitOptions } from './readiness';
import { StoreLookup, storeInfoOf } from './store-lookup';
import { LookupOptions, PipelineReadiness, Readiness, StoreInfo } from './types';
import { VersionedReads } from './versioned-reads';

/** Read-only access to adjunct's stores from any process: point/as-of/history reads, kv scans, readiness. */
export class Lookup {
  private readonly ctx: LookupContext;
  private readonly versioned: VersionedReads;
  private readonly kv: KvReads;
  private readonly readinessChecker: ReadinessChecker;
  private closed = false;

  constructor(
    readonly client: Client,
    readonly keyspace: string,
    options: LookupOptions,
    private readonly ownsClient: boolean,
  ) {
    this.ctx = new LookupContext(client, keyspace, options);
    this.versioned = new VersionedReads(this.ctx);
    this.kv = new KvReads(this.ctx);
    this.readinessChecker = new ReadinessChecker(this.ctx);
  }

  /** Accessor of one store (no I/O until a read; unknown stores fail on first use with UNKNOWN_STORE). */
  store<K = unknown, V = unknown>(name: string): StoreLookup<K, V> {
    this.ensureOpen();
    return new StoreLookup<K, V>(name, this.ctx, this.versioned, this.kv);
  }

  /** Every store in the catalog with its shape and current generation. */
  async stores(): Promise<StoreInfo[]> {
    this.ensureOpen();
    const entries = await orIfMissing(this.ctx.catalog.list(), []);
    return entries.map(storeInfoOf).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Waits until a pipeline (or every pipeline of a store) is READY at the current generation; ReadyTimeoutError otherwise. */
  waitUntilReady(pipelineOrStore: string, options: WaitOptions = {}): Promise<PipelineReadiness[]> {
    this.ensureOpen();
    return this.readinessChecker.waitUntilReady(pipelineOrStore, options);
  }

  /** Bootstrap readiness of the expected pipelines, or of every pipeline with status rows. */
  readiness(expected: string[] = []): Promise<Readiness> {
    this.ensureOpen();
    return this.readinessChecker.readiness(expected);
  }

  /** Drops cached catalog entries, stream times and partition lists. */
  invalidate(): void {
    this.ctx.invalidate();
  }

  /** Releases the lookup; shuts the client down only if openLookup created it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsClient) await this.client.shutdown();
  }

  private ensureOpen(): void {
    if (this.closed) throw new AdjunctError('lookup is closed', { code: 'LOOKUP_CLOSED', stage: 'lookup' });
  }
}

/** Opens a Lookup on a keyspace, with a caller-owned client or one created (and connected) from `cassandra` options. */
export async function openLookup(options: LookupOptions): Promise<Lookup> {
  const keyspace = validateKeyspaceName(options.keyspace);
  if (options.client && options.cassandra) throw invalidLookupArgument('give either client or cassandra options, not both');
  if (!options.client && !options.cassandra) throw invalidLookupArgument('openLookup needs a client or cassandra options');
  const owns = !options.client;
  const client = options.client ?? new Client({ queryOptions: { prepare: true }, ...options.cassandra! });
  try {
    await client.connect();
  } catch (e) {
    if (owns) await client.shutdown().catch(() => undefined);
    const err = wrapCassandraError(e, 'connecting to Cassandra', 'lookup');
    throw new AdjunctError(err.message, { code: 'CASSANDRA_UNAVAILABLE', stage: 'lookup', retriable: true, cause: e });
  }
  return new Lookup(client, keyspace, options, owns);
}
