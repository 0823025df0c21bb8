import * as os from 'os';
import { Client } from 'cassandra-driver';
import { Admin, Kafka, Producer } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { AdjunctConfig, PipelineSpec } from '../config/schema';
import { LoadedConfig, pathToString } from '../config/load';
import { deprecationWarnings } from '../config/run-checks';
import { PipelineStatusTable } from '../catalog';
import { createRegistry } from '../converters';
import { Clock, systemClock } from '../clock';
import { AdjunctError, asAdjunctError, describeError, isStoppedWhileStarting, publicErrorText } from '../errors';
import { renewingAdmin } from '../kafka/renewing-admin';
import { createLogger, Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { ensureDeadLetterTopic } from '../sink/dlq-reporter';
import { WriteBudget } from '../sink/write-budget';
import { connectCassandraAtStartup, warnCassandraStartupRetry } from './cassandra-startup';
import { connectAdmin, createCassandra, createKafka } from './clients';
import { connectKafkaAtStartup, warnKafkaStartupRetry } from './kafka-startup';
import { allAtStartup, stoppedWhileStarting } from './startup-wait';
import { PipelineRunner, RunnerStatus } from './pipeline-runner';
import { bytesInFlight, recordsInFlight } from './store-wiring';
import { assembleRunner, SharedClients } from './runner-assembly';
import { prepareCatalog, validateBeforeAnyCql } from './store-setup';

/** Worker lifecycle states. */
export type WorkerState = 'CREATED' | 'STARTING' | 'RUNNING' | 'STOPPING' | 'STOPPED' | 'FAILED';

/** A status snapshot of the whole worker. */
export interface WorkerStatus {
  workerId: string;
  state: WorkerState;
  startedAt: string | null;
  lastError?: string;
  pipelines: RunnerStatus[];
}

/** Options of a worker besides its config. */
export interface WorkerOptions {
  logger?: Logger;
  metrics?: AdjunctMetrics;
  workerId?: string;
  /** Show a bootstrap progress bar when stdout is a TTY. */
  progressBar?: boolean;
  /** Called once when the worker fails fatally. */
  onFatal?: (e: AdjunctError) => void;
  /** Time source (default: the system clock). */
  clock?: Clock;
}

/** The adjunct worker: runs every configured pipeline from changelog topics into versioned/kv stores. */
export class Worker {
  state: WorkerState = 'CREATED';
  lastError?: AdjunctError;
  readonly logger: Logger;
  readonly metrics: AdjunctMetrics;
  readonly workerId: string;
  readonly config: AdjunctConfig;
  private readonly clock: Clock;
  private cassandra?: Client;
  private kafka?: Kafka;
  private admin?: Admin;
  private producer?: Producer;
  private registry?: SchemaRegistry;
  private startedAt: Date | null = null;
  readonly runners = new Map<string, PipelineRunner>();
  private statusTable?: PipelineStatusTable;
  /** The start under way (stop() waits for it to settle before tearing down). */
  private starting?: Promise<void>;
  /** Set by a stop() during STARTING: the start gives up at its next step (the wait for Cassandra within 100 ms). */
  private abortStart = false;
  /** The stop under way or done (stop() is idempotent: every caller waits for the same teardown). */
  private stopping?: Promise<void>;

  constructor(
    private readonly loaded: LoadedConfig,
    private readonly options: WorkerOptions = {},
  ) {
    this.config = loaded.config;
    this.logger = options.logger ?? createLogger(this.config.worker.logLevel);
    this.metrics = options.metrics ?? new AdjunctMetrics();
    this.workerId = options.workerId ?? `${os.hostname()}-${process.pid}`;
    this.clock = options.clock ?? systemClock;
  }

  /** The shared Cassandra client (after start). */
  get cassandraClient(): Client | undefined {
    return this.cassandra;
  }

  /**
   * Connects, prepares schema and starts pipelines (dependents only after their bootstrap pipelines are READY). A stop()
   * while starting aborts the start at its next step (it rejects; the state is then decided by stop()).
   */
  start(): Promise<void> {
    this.starting = this.startUp();
    return this.starting;
  }

  private async startUp(): Promise<void> {
    this.state = 'STARTING';
    this.startedAt = new Date(this.clock.now());
    try {
      validateBeforeAnyCql(this.config);
      for (const w of deprecationWarnings(this.config)) this.logger.warn({ path: pathToString(w.path) }, w.message);
      const shared = await this.connect();
      for (const spec of this.config.pipelines) {
        this.throwIfAborted();
        this.runners.set(spec.name, await this.buildRunner(spec, shared));
      }
      this.throwIfAborted();
      await this.startRunners();
      if (this.state === 'STARTING') this.state = 'RUNNING';
      this.logger.info({ workerId: this.workerId, pipelines: this.config.pipelines.map((p) => p.name) }, 'worker running');
    } catch (e) {
      // Asked to stop while starting (a signal during the wait for Cassandra or Kafka): not a failure of the worker.
      if (this.abortStart) throw asFatal(e);
      this.fail(asFatal(e));
      throw this.lastError;
    }
  }

  /** Connects Cassandra (keyspace, catalog), Kafka (admin, DLQ producer and topics) and the registry. */
  private async connect(): Promise<SharedClients> {
    const cfg = this.config;
    const cassandra = createCassandra(cfg.cassandra);
    this.cassandra = cassandra;
    this.kafka = createKafka(cfg.kafka, this.logger);
    const kafka = this.kafka;
    // Renewed when a topic it was asked about is deleted (kafkajs's admin would fail every request after that).
    const admin = renewingAdmin(kafka.admin(), { create: () => kafka.admin(), connect: connectAdmin, log: this.logger });
    this.admin = admin;
    // Cassandra (connection, keyspace, catalog) and Kafka (admin, broker list) come up side by side; a failure of one
    // stops the other, and both settle before the start fails.
    const [catalog] = await allAtStartup(
      () => this.abortStart || this.state !== 'STARTING',
      [
        (shouldStop) =>
          connectCassandraAtStartup(cassandra, () => prepareCatalog(cassandra, cfg), {
            clock: this.clock,
            shouldStop,
            timeoutMs: cfg.cassandra.startupTimeout,
            onRetry: warnCassandraStartupRetry(this.logger),
          }),
        (shouldStop) =>
          connectKafkaAtStartup(admin, () => createKafka(cfg.kafka, this.logger, STARTUP_PROBE).admin(), {
            clock: this.clock,
            shouldStop,
            timeoutMs: cfg.kafka.startupTimeout,
            onRetry: warnKafkaStartupRetry(this.logger),
          }),
      ],
    );
    this.statusTable = new PipelineStatusTable(cassandra, cfg.cassandra.keyspace);
    if (cfg.registry) this.registry = createRegistry(cfg.registry);
    const dlqs = cfg.pipelines.flatMap((p) => (p.errors.deadLetterQueue ? [p.errors.deadLetterQueue] : []));
    for (const d of dlqs) await ensureDeadLetterTopic(this.admin, d);
    if (dlqs.length) {
      // Few producer retries: the sink retries a failed dead letter itself, heartbeating between attempts.
      this.producer = this.kafka.producer({
        allowAutoTopicCreation: false,
        idempotent: true,
        maxInFlightRequests: 1,
        retry: { retries: 2, maxRetryTime: 2_000 },
      });
      await this.producer.connect();
    }
    // With write batching, maxInFlight bounds Cassandra requests (batches); the record budget lets them be full.
    const budget = new WriteBudget(recordsInFlight(cfg), bytesInFlight(cfg));
    this.metrics.reportWritesInFlight(budget);
    return { ...catalog, budget };
  }

  /** The runner of one pipeline, assembled from the worker's connected clients (`assembleRunner`). */
  private buildRunner(spec: PipelineSpec, shared: SharedClients): Promise<PipelineRunner> {
    return assembleRunner(spec, {
      config: this.config,
      baseDir: this.loaded.baseDir,
      cassandra: this.cassandra!,
      kafka: this.kafka!,
      admin: this.admin!,
      producer: this.producer,
      registry: this.registry,
      statusTable: this.statusTable!,
      shared,
      metrics: this.metrics,
      logger: this.logger,
      clock: this.clock,
      workerId: this.workerId,
      progressBar: this.options.progressBar ?? false,
      runner: (name) => this.runners.get(name),
      stopping: () => this.state === 'STOPPING' || this.state === 'STOPPED',
      startAborted: () => this.abortStart || this.state === 'STOPPING' || this.state === 'STOPPED',
      pipelineFailed: (name, e) => this.pipelineFailed(name, e),
    });
  }

  /** Starts bootstrap pipelines first; dependents start in the background once what they depend on is READY. */
  private async startRunners(): Promise<void> {
    const started = new Map<string, Promise<void>>();
    const startRunner = (name: string): Promise<void> => {
      let p = started.get(name);
      if (!p) {
        p = this.startAfterDependencies(name, startRunner);
        started.set(name, p);
      }
      return p;
    };
    for (const spec of this.config.pipelines) {
      if (spec.dependsOn.length) void startRunner(spec.name).catch((e) => this.fail(asFatal(e)));
      else await startRunner(spec.name);
    }
  }

  private async startAfterDependencies(name: string, startRunner: (name: string) => Promise<void>): Promise<void> {
    const spec = this.config.pipelines.find((x) => x.name === name)!;
    if (spec.dependsOn.length) {
      this.logger.info({ pipeline: name, dependsOn: spec.dependsOn }, 'waiting for bootstrap pipelines to be READY');
      await Promise.all(
        spec.dependsOn.map(async (dep) => {
          await startRunner(dep);
          await this.runners.get(dep)!.whenReady();
        }),
      );
    }
    if ((this.state !== 'STARTING' && this.state !== 'RUNNING') || this.abortStart) return;
    await this.runners.get(name)!.start();
  }

  /**
   * A pipeline's fatal error: with worker.pipelineFailure isolate, a FAILED main task fails only its pipeline (Kafka
   * Connect's task model: restart it with POST /pipelines/:name/restart); anything else fails the worker.
   */
  private pipelineFailed(name: string, e: AdjunctError): void {
    if (this.config.worker.pipelineFailure === 'isolate' && this.runners.get(name)?.state === 'FAILED') {
      this.logger.error(
        { pipeline: name, code: e.code, err: e.message },
        'pipeline FAILED; the worker keeps running the other pipelines (worker.pipelineFailure isolate); fix the cause, then restart it',
      );
      return;
    }
    this.fail(e);
  }

  /** Records a fatal failure: state FAILED; the process owner decides to stop (the CLI exits non-zero). */
  fail(e: AdjunctError): void {
    if (this.state === 'FAILED') return;
    // A start-up step (a reload's or a dependent's Kafka retries) that the stop ended is the stop itself, not a failure.
    if (isStoppedWhileStarting(e) && (this.abortStart || this.state === 'STOPPING' || this.state === 'STOPPED')) {
      this.logger.info({ code: e.code, err: e.message }, 'a start-up step ended by the stop');
      return;
    }
    this.lastError = e;
    this.state = 'FAILED';
    this.logger.error({ code: e.code, stage: e.stage, ...e.context, err: e.message }, 'worker failed');
    this.options.onFatal?.(e);
  }

  /** True when every bootstrap pipeline is READY and no pipeline is STALLED or FAILED. */
  isReady(): boolean {
    return (
      this.state === 'RUNNING' && [...this.runners.values()].every((r) => r.isReady() && r.state !== 'STALLED' && r.state !== 'FAILED')
    );
  }

  /** Looks up a pipeline runner by name. */
  runner(name: string): PipelineRunner {
    const r = this.runners.get(name);
    if (!r && (this.state === 'CREATED' || this.state === 'STARTING') && this.config.pipelines.some((p) => p.name === name))
      throw new AdjunctError(`pipeline ${name} is not built yet: the worker is still starting`, {
        code: 'WORKER_NOT_STARTED',
        stage: 'config',
      });
    if (!r) throw new AdjunctError(`unknown pipeline ${name}`, { code: 'UNKNOWN_PIPELINE', stage: 'config' });
    return r;
  }

  /**
   * Stops fetching, drains in-flight writes, commits, leaves the groups and closes clients (bounded by shutdownTimeout).
   * During STARTING it first aborts the start and waits for it to settle, so nothing the start opens outlives the stop.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    if (this.state === 'STARTING') {
      this.abortStart = true;
      await this.starting?.catch(() => undefined);
    }
    const failed = this.state === 'FAILED';
    this.state = 'STOPPING';
    const timeout = this.config.worker.shutdownTimeout;
    const all = Promise.all(
      [...this.runners.values()].map((r) =>
        r.stop().catch((e) => this.logger.warn({ pipeline: r.name, err: describeError(e) }, 'stop failed')),
      ),
    );
    await closeWithin(all, timeout + 5000);
    // A client waits for its pending requests before it closes: against a broker or node that does not answer (a stop
    // while the start waits for it) that is a request timeout or more. What is still pending now is abandoned.
    await Promise.all([
      closeWithin(this.producer?.disconnect(), CLIENT_CLOSE_MS),
      closeWithin(this.admin?.disconnect(), CLIENT_CLOSE_MS),
      closeWithin(this.cassandra?.shutdown(), CLIENT_CLOSE_MS),
    ]);
    this.state = failed ? 'FAILED' : 'STOPPED';
    this.logger.info({ state: this.state }, 'worker stopped');
  }

  /** Ends a start that stop() aborted, between its steps. */
  private throwIfAborted(): void {
    if (this.abortStart) throw stoppedWhileStarting('starting');
  }

  /** Status snapshot of the worker and every pipeline. */
  status(): WorkerStatus {
    return {
      workerId: this.workerId,
      state: this.state,
      startedAt: this.startedAt?.toISOString() ?? null,
      lastError: this.lastError === undefined ? undefined : publicErrorText(this.lastError),
      pipelines: [...this.runners.values()].map((r) => r.status()),
    };
  }
}

/** The Kafka client of the start-up wait's attempts: one try per call, kafkajs's own lines at debug. */
const STARTUP_PROBE = { clientIdSuffix: '-startup-probe', noRetries: true, quiet: true } as const;

/** How long a stop waits for one client (producer, admin, Cassandra) to close, after the pipelines have stopped. */
const CLIENT_CLOSE_MS = 2000;

/** Waits for a client's close, at most `ms` (its failure ignored: the worker is going away). */
async function closeWithin(closing: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (closing === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closing.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

function asFatal(e: unknown): AdjunctError {
  return asAdjunctError(e, (message, cause) => new AdjunctError(message, { code: 'WORKER_FAILED', cause }));
}
