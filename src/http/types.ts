import type { Registry } from 'prom-client';
import type { Lookup } from '../lookup';
import type { Logger } from '../observability/logger';

/** The pipeline controls the admin API drives (implemented by PipelineRunner). */
export interface AdminRunner {
  pause(): Promise<void>;
  resume(): Promise<void>;
  reload(): Promise<number>;
  rollback(to: number): Promise<{ current: number; previous: number | null; changed: boolean }>;
  /** Restarts a FAILED pipeline in place (the worker keeps running); resolves with the new state. */
  restart?(): Promise<string>;
  readonly state?: string;
}

/** A pipeline in a worker status snapshot, as far as the HTTP API shows it. */
export interface HttpPipelineStatus {
  name: string;
  /** Pipeline state (RUNNING, STALLED, FAILED…). */
  state?: string;
  generation?: number;
  store?: string;
  /** Per-partition rows (lag, offsets, stream time, horizon). */
  partitions?: object[];
  /** The last error, already in public form (no driver internals). */
  lastError?: string;
  /** Why the pipeline is STALLED. */
  stalledBy?: string;
  bootstrap?: { state: string; done?: number; total?: number };
  building?: { generation: number };
  /** The task's consumer: fetch requests completed, the last one's time, batches in progress. */
  consumer?: { fetches: number; lastFetchAt: string | null; batchesInProgress: number };
}

/** What the HTTP server needs from a worker (implemented by Worker). */
export interface HttpWorker {
  status(): { workerId?: string; state: string; pipelines: HttpPipelineStatus[] };
  isReady(): boolean;
  runner(name: string): AdminRunner;
  readonly metrics: { readonly registry: Registry };
}

/** The worker.http settings the server uses. */
export interface HttpSettings {
  host: string;
  port: number;
  /** Bearer token of the admin routes (without one, admin routes are off unless bound to loopback). */
  adminToken?: string;
  /** Optional bearer token of the read routes (/healthz stays open; the admin token is accepted too). */
  readToken?: string;
  /** Serve HTTPS with these PEM files. */
  tls?: { keyFile: string; certFile: string };
  /** Ms to receive a whole request (default 30 s). */
  requestTimeout?: number;
  /** Ms an idle socket stays open (default 60 s). */
  connectionTimeout?: number;
  /** Ms an idle keep-alive connection stays open (default 5 s). */
  keepAliveTimeout?: number;
  /** Byte cap of a history reply (default 1 MiB). */
  maxReplyBytes?: number;
}

/** Where the read routes get their Lookup: a function that throws (e.g. WORKER_NOT_STARTED, 503) while none is open yet. */
export type LookupSource = () => Lookup;

/** Options of buildHttpServer. */
export interface HttpServerOptions {
  /** The worker this server runs next to; absent in serve mode (read-only API, no admin). */
  worker?: HttpWorker;
  /** The reads' Lookup, or a source of it (a worker's server listens before the worker has connected to Cassandra). */
  lookup: Lookup | LookupSource;
  config: HttpSettings;
  logger: Logger;
  /** Serve mode: bootstrap pipelines whose READY /readyz waits for (default: every pipeline with status rows). */
  expectedPipelines?: string[];
  /** Serve mode: registry exposed on /metrics (default: a registry with the process metrics). */
  registry?: Registry;
}

/** Route schema of a route that takes no query parameters (unknown ones are a 400). */
export const NO_QUERY = { querystring: { type: 'object', properties: {}, additionalProperties: false } } as const;
