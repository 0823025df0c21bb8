import type { Registry } from 'prom-client';
import type { Lookup } from '../lookup';
import type { Logger } from '../observability/logger';

/** The pipeline controls the admin API drives (implemented by PipelineRunner). */
export interface AdminRunner {
  pause(): Promise<void>;
  resume(): Promise<void>;
  reload(): Promise<number>;
  rollback(to: number): Promise<{ current: number; previous: number | null; changed: boolean }>;
  readonly state?: string;
}

/** A pipeline in a worker status snapshot, as far as readiness needs it. */
export interface HttpPipelineStatus {
  name: string;
  /** Pipeline state (RUNNING, STALLED, FAILED…). */
  state?: string;
  /** Why the pipeline is STALLED. */
  stalledBy?: string;
  lastError?: string;
  bootstrap?: { state: string; done?: number; total?: number };
}

/** What the HTTP server needs from a worker (implemented by Worker). */
export interface HttpWorker {
  status(): { state: string; pipelines: HttpPipelineStatus[] };
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
}

/** Options of buildHttpServer. */
export interface HttpServerOptions {
  /** The worker this server runs next to; absent in serve mode (read-only API, no admin). */
  worker?: HttpWorker;
  lookup: Lookup;
  config: HttpSettings;
  logger: Logger;
  /** Serve mode: bootstrap pipelines whose READY /readyz waits for (default: every pipeline with status rows). */
  expectedPipelines?: string[];
  /** Serve mode: registry exposed on /metrics (default: a registry with the process metrics). */
  registry?: Registry;
}
