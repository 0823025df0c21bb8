import { Client, QueryOptions, types } from 'cassandra-driver';
import { InvalidArgumentError, isMissingTable, isRetriableCassandraError, wrapCassandraError } from '../../errors';
import { withRetry } from '../../errors/retry';
import type { RowListener } from '../types';
import type { CoalescedWrite, WriteBatcher } from './write-batcher';
import { int64Bytes } from './cql-types';
import { leanBatchRequestInstalled } from './fast-batch-request';

/** One statement of a request: CQL and its bind values (a batch carries several). */
export interface Statement {
  query: string;
  params: unknown[];
}

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
  /** Every retriable failure of one retried request, `op` (a fresh object per request: a stall monitor tracks each). */
  onFailure?: (error: unknown, attempt: number, op: object) => void;
  /** The request `op`, which had failed, ended (succeeded or gave up). */
  onSettled?: (op: object) => void;
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
  /** Rows' times may be bound as numbers (rowInt64): rows are batched, the lean batch body is installed, numbers are accepted. */
  private readonly timesAsNumbers: boolean;
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
    this.timesAsNumbers = settings.batcher?.coalesces === true && !this.useBigInt && leanBatchRequestInstalled();
  }

  /** A bigint bind value in whatever form the client's encoder expects. */
  long(n: number): types.Long | bigint {
    return this.useBigInt ? BigInt(n) : types.Long.fromNumber(n);
  }

  /**
   * A bigint bind value of a row for issueRow: the number itself when rows go out in batches with the lean batch body
   * (it writes a safe integer in place: no Long, no Buffer per value), else its 8 bytes. The body is installed by the
   * worker's client factory, never here.
   */
  rowInt64(n: number): number | Buffer {
    return this.timesAsNumbers && Number.isSafeInteger(n) ? n : int64Bytes(n);
  }

  /** Executes a prepared read; `abandoned` stops its retries (a read made for a write of a task that stopped). */
  read(query: string, params: unknown[], what: string, extra?: QueryOptions, abandoned?: () => boolean): Promise<types.ResultSet> {
    // The driver only reads a request's options: reads without options of their own share one object.
    return this.send([{ query, params }], extra === undefined ? this.readOptions : { ...this.readOptions, ...extra }, what, abandoned);
  }

  /**
   * Executes a prepared read whose `expected` answers the caller handles itself (a usability probe of a table or
   * columns another worker created just now: "does not exist", "Undefined column name"): those are thrown at once,
   * neither retried nor reported through the retry policy's onRetry (they are not failures of the store); other
   * transient failures are retried as for read.
   */
  probe(query: string, what: string, expected: (e: unknown) => boolean): Promise<types.ResultSet> {
    return this.send([{ query, params: [] }], { ...this.readOptions }, what, undefined, expected);
  }

  /**
   * Executes a prepared write (idempotent unless told otherwise). Its client timestamp is fixed now, in call order: a
   * retry can never overwrite a later write of the same row, and two writes of one row apply in the order they were
   * issued even when the later one reaches the driver first (the driver would stamp them when sent, e.g. after a prepare).
   */
  write(query: string, params: unknown[], what: string, extra: QueryOptions = {}): Promise<types.ResultSet> {
    const opts: QueryOptions = { ...this.writeOptions, ...extra };
    if (opts.isIdempotent !== false && opts.timestamp === undefined) opts.timestamp = nextWriteTimestamp();
    return this.send([{ query, params }], opts, what);
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

  /** writeRow for the sink: the listener hears when the row is durable (no promise per row with a batcher). */
  issueRow(row: CoalescedWrite, what: string, listener: RowListener): void {
    const b = this.settings.batcher;
    if (b) b.add(row, listener);
    else
      this.write(row.query, row.params, what).then(
        () => listener.rowWritten(),
        (e: unknown) => listener.rowFailed(e),
      );
  }

  /**
   * Sends coalesced rows as one request with a fixed client timestamp: a single prepared statement for one row, else
   * an UNLOGGED batch routed to the first row's replicas.
   */
  sendRows(rows: readonly CoalescedWrite[], timestampMicros: number, abandoned?: () => boolean): Promise<unknown> {
    const opts: QueryOptions = { ...this.writeOptions, timestamp: types.Long.fromNumber(timestampMicros), routingKey: rows[0].routingKey };
    return this.send(rows, opts, rows.length === 1 ? 'write row' : `write batch of ${rows.length} rows`, abandoned);
  }

  /**
   * Runs op under the write retry policy (every request of send, and steps of a write that are not requests, such as a
   * typed row's schema re-read and column DDL): retriable failures are retried with backoff until the policy, `abandoned`
   * or `notRetried` stops them.
   */
  retried<T>(op: () => Promise<T>, abandoned?: () => boolean, notRetried?: (e: unknown) => boolean): Promise<T> {
    const retry = this.settings.retry;
    if (!retry) return op();
    const retriable = retry.isRetriable ?? isRetriableCassandraError;
    const { onFailure, onSettled } = retry;
    const operation = {};
    return withRetry(op, {
      timeoutMs: retry.timeoutMs,
      maxDelayMs: retry.maxDelayMs,
      initialDelayMs: 100,
      isRetriable: notRetried ? (e) => !notRetried(e) && retriable(e) : retriable,
      onFailure: onFailure && ((e, attempt) => onFailure(e, attempt, operation)),
      onSettled: onSettled && (() => onSettled(operation)),
      onRetry: retry.onRetry,
      shouldStop: abandoned ? () => retry.shouldStop?.() === true || abandoned() : retry.shouldStop,
    });
  }

  /** Executes an unlogged batch of prepared writes (one request, one client timestamp). */
  async batch(statements: readonly Statement[], what: string): Promise<void> {
    await this.send(statements, { ...this.writeOptions, timestamp: nextWriteTimestamp() }, what);
  }

  /** Executes a DDL statement (not prepared) with the DDL profile. */
  async ddl(query: string, what: string): Promise<void> {
    try {
      await this.client.execute(query, [], { executionProfile: this.settings.ddlExecutionProfile });
    } catch (e) {
      throw wrapCassandraError(e, what, 'schema', this.context);
    }
  }

  /**
   * The one send path: a single statement, or an UNLOGGED batch of several, with opts (a fresh object per call, or a
   * shared one the driver only reads). Driver failures become classified StoreErrors; with a retry policy, idempotent
   * requests are retried as a whole (with the client timestamp already in opts, so a retry cannot reorder rows). A
   * lightweight transaction (IF NOT EXISTS) is never retried: it may have applied before the failure, and Cassandra
   * refuses a client timestamp on it anyway. Without a retry policy (every lookup) a request is sent once, directly.
   */
  private send(
    statements: readonly Statement[],
    opts: QueryOptions,
    what: string,
    abandoned?: () => boolean,
    notRetried: ((e: unknown) => boolean) | undefined = statements.length > 1 ? isMissingTable : undefined,
  ): Promise<types.ResultSet> {
    if (opts.isIdempotent === false || this.settings.retry === undefined) return this.sendOnce(statements, opts, what);
    // A batch whose table is gone is not retried whole: the batcher splits it, so rows of live tables go through.
    // A probe's caller waits for its expected answers on its own.
    return this.retried(() => this.sendOnce(statements, opts, what), abandoned, notRetried);
  }

  /** One attempt of a request; a driver failure becomes a classified StoreError. */
  private sendOnce(statements: readonly Statement[], opts: QueryOptions, what: string): Promise<types.ResultSet> {
    const request =
      statements.length === 1
        ? this.client.execute(statements[0].query, statements[0].params, opts)
        : // The statements carry query and params: the driver reads nothing else from a batch entry.
          this.client.batch(statements as Statement[], { ...opts, logged: false });
    return request.catch((e: unknown) => {
      throw wrapCassandraError(e, what, 'store', this.context);
    });
  }
}
