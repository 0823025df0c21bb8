import { Client, QueryOptions, types } from 'cassandra-driver';
import { InvalidArgumentError, isMissingTable, isRetriableCassandraError, wrapCassandraError } from '../../errors';
import { withRetry } from '../../errors/retry';
import type { CoalescedWrite, WriteBatcher } from './write-batcher';

/** Retry of retriable driver errors (timeouts, unavailable, overloaded, no host) with exponential backoff. */
export interface StoreRetryPolicy {
  /** Give up after this long (then the error surfaces, classified). */
  timeoutMs: number;
  /** Longest single backoff. */
  maxDelayMs: number;
  /** Called before each retry (metrics, logs). */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** Stop retrying early (shutdown). */
  shouldStop?: () => boolean;
  /** Which failures to retry (default: the transient ones, isRetriableCassandraError). */
  isRetriable?: (error: unknown) => boolean;
}

let lastMicros = 0;
/** A strictly increasing client-side write timestamp (µs since the epoch), fixed once per logical write or batch. */
export function nextWriteMicros(): number {
  const now = Date.now() * 1000;
  lastMicros = now > lastMicros ? now : lastMicros + 1;
  return lastMicros;
}

function nextWriteTimestamp(): types.Long {
  return types.Long.fromNumber(nextWriteMicros());
}

/** Consistency level by driver code or name (e.g. 'localQuorum', 'one'). */
export type ConsistencyOption = types.consistencies | keyof typeof types.consistencies;

/** Execution settings shared by a store's statements. */
export interface ExecutionSettings {
  /** Consistency of reads (default localQuorum). */
  readConsistency?: ConsistencyOption;
  /** Consistency of writes (default localQuorum). */
  writeConsistency?: ConsistencyOption;
  /** Driver execution profile for DML statements. */
  executionProfile?: string;
  /** Driver execution profile for DDL statements (CREATE KEYSPACE/TABLE). */
  ddlExecutionProfile?: string;
  /** Retry retriable failures of reads and writes (off by default; the sink turns it on). */
  retry?: StoreRetryPolicy;
  /** Coalesces row writes into UNLOGGED batches (the worker sets one per pipeline; absent = one request per row). */
  batcher?: WriteBatcher;
}

/** Resolves a consistency option to the driver's numeric code. */
export function resolveConsistency(c: ConsistencyOption | undefined, fallback: types.consistencies): types.consistencies {
  if (c === undefined) return fallback;
  if (typeof c === 'number' && Object.values(types.consistencies).includes(c)) return c;
  if (typeof c === 'string' && c in types.consistencies) return types.consistencies[c as keyof typeof types.consistencies];
  throw new InvalidArgumentError(`unknown consistency level ${String(c)}`);
}

/** Converts a driver bigint/Long/number cell to a JS number. */
export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof types.Long) return v.toNumber();
  if (v !== null && typeof v === 'object' && 'toNumber' in v && typeof (v as { toNumber: unknown }).toNumber === 'function') {
    return (v as { toNumber(): number }).toNumber();
  }
  return Number(v);
}

/** Runs CQL for a store with its consistency levels and profiles; every driver failure becomes a classified StoreError. */
export class CqlExecutor {
  private readonly writeCl: types.consistencies;
  private readonly useBigInt: boolean;
  /** Options of every prepared read (extra options are spread over a copy per call). */
  private readonly readOptions: QueryOptions;
  /** Options of every prepared write. */
  private readonly writeOptions: QueryOptions;

  constructor(
    readonly client: Client,
    private readonly settings: ExecutionSettings = {},
    private readonly context: Record<string, unknown> = {},
  ) {
    const readCl = resolveConsistency(settings.readConsistency, types.consistencies.localQuorum);
    this.writeCl = resolveConsistency(settings.writeConsistency, types.consistencies.localQuorum);
    const profile = settings.executionProfile;
    this.readOptions = { prepare: true, executionProfile: profile, consistency: readCl, isIdempotent: true };
    this.writeOptions = { prepare: true, executionProfile: profile, consistency: this.writeCl, isIdempotent: true };
    const enc = (client as unknown as { options?: { encoding?: { useBigIntAsLong?: boolean } } }).options?.encoding;
    this.useBigInt = enc?.useBigIntAsLong === true;
  }

  /** A bigint bind value in whatever form the client's encoder expects. */
  long(n: number): types.Long | bigint {
    return this.useBigInt ? BigInt(n) : types.Long.fromNumber(n);
  }

  /** Executes a prepared read. */
  async read(query: string, params: unknown[], what: string, extra: QueryOptions = {}): Promise<types.ResultSet> {
    return this.run(query, params, what, { ...this.readOptions, ...extra }, false);
  }

  /** Executes a prepared write (idempotent unless told otherwise). */
  async write(query: string, params: unknown[], what: string, extra: QueryOptions = {}): Promise<types.ResultSet> {
    return this.run(query, params, what, { ...this.writeOptions, ...extra }, true);
  }

  /**
   * Writes one row through the batcher when there is one (acknowledged with its batch), else as a single prepared
   * write. The returned promise settles when the row is durable.
   */
  writeRow(row: CoalescedWrite, what: string): Promise<unknown> {
    const b = this.settings.batcher;
    if (b) return b.write(row);
    return this.write(row.query, row.params, what);
  }

  /**
   * Sends coalesced rows as one request with a fixed client timestamp: a single prepared statement for one row, else
   * an UNLOGGED batch routed to the rows' replicas. Retried as a whole when a retry policy is set.
   */
  sendRows(rows: readonly CoalescedWrite[], timestampMicros: number): Promise<unknown> {
    const timestamp = types.Long.fromNumber(timestampMicros);
    const opts: QueryOptions = { ...this.writeOptions, timestamp, routingKey: rows[0].routingKey };
    const once =
      rows.length === 1
        ? () => this.client.execute(rows[0].query, rows[0].params, opts)
        : // The rows carry query and params already: the driver reads nothing else from a batch entry.
          () => this.client.batch(rows as CoalescedWrite[], { ...opts, logged: false });
    const attempt = async () => {
      try {
        return await once();
      } catch (e) {
        throw wrapCassandraError(e, rows.length === 1 ? 'write row' : `write batch of ${rows.length} rows`, 'store', this.context);
      }
    };
    const retry = this.settings.retry;
    if (!retry) return attempt();
    const retriable = retry.isRetriable ?? isRetriableCassandraError;
    return withRetry(attempt, {
      timeoutMs: retry.timeoutMs,
      maxDelayMs: retry.maxDelayMs,
      initialDelayMs: 100,
      // A batch whose table is gone is not retried whole: the batcher splits it, so rows of live tables go through.
      isRetriable: rows.length > 1 ? (e) => !isMissingTable(e) && retriable(e) : retriable,
      onRetry: retry.onRetry,
      shouldStop: retry.shouldStop,
    });
  }

  /** Executes an unlogged batch of prepared writes (one request). */
  async batch(queries: { query: string; params: unknown[] }[], what: string): Promise<void> {
    try {
      await this.client.batch(queries, {
        prepare: true,
        logged: false,
        consistency: this.writeCl,
        isIdempotent: true,
        executionProfile: this.settings.executionProfile,
      });
    } catch (e) {
      throw wrapCassandraError(e, what, 'store', this.context);
    }
  }

  /** Executes a DDL statement (not prepared) with the DDL profile. */
  async ddl(query: string, what: string): Promise<void> {
    try {
      await this.client.execute(query, [], { executionProfile: this.settings.ddlExecutionProfile });
    } catch (e) {
      throw wrapCassandraError(e, what, 'schema', this.context);
    }
  }

  /** Executes with opts (a fresh object per call); only writes get a fixed client timestamp, and only when retrying. */
  private async run(query: string, params: unknown[], what: string, opts: QueryOptions, isWrite: boolean): Promise<types.ResultSet> {
    const once = async () => {
      try {
        return await this.client.execute(query, params, opts);
      } catch (e) {
        throw wrapCassandraError(e, what, 'store', this.context);
      }
    };
    const retry = this.settings.retry;
    // Only idempotent statements are retried: a lightweight transaction (IF NOT EXISTS) may have applied before the
    // failure, and Cassandra refuses a client timestamp on it anyway.
    if (!retry || opts.isIdempotent === false) return once();
    // A retried write keeps its first client timestamp, so it can never overwrite a later write of the same row.
    if (isWrite && opts.timestamp === undefined) opts.timestamp = nextWriteTimestamp();
    return withRetry(once, {
      timeoutMs: retry.timeoutMs,
      maxDelayMs: retry.maxDelayMs,
      initialDelayMs: 100,
      isRetriable: retry.isRetriable ?? isRetriableCassandraError,
      onRetry: retry.onRetry,
      shouldStop: retry.shouldStop,
    });
  }
}
