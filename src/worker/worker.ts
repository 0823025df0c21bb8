import * as os from 'os';
import { Client } from 'cassandra-driver';
import { Admin, Kafka, Producer } from 'kafkajs';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { AdjunctConfig } from '../config/schema';
import { LoadedConfig } from '../config/load';
import { renderTableOptions, TableOptions } from '../store/cassandra/table-options';
import { tableNameForStore } from '../store/cassandra/identifiers';
import { ensureCatalog, PipelineStatusTable, StoreCatalog } from '../catalog';
import { createConverter, createRegistry } from '../converters';
import { AdjunctError, asAdjunctError, describeError } from '../errors';
import { createExtractor } from '../extract';
import { createLogger, Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { DeadLetterQueueReporter } from '../sink/dlq-reporter';
import { Semaphore } from '../sink/semaphore';
import { createCassandra, createKafka } from './clients';
import { PipelineRunner, RunnerStatus } from './pipeline-runner';
import { ensureKeyspaceFor, recordsInFlight, StoreWiring } from './store-wiring';

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
}

/** The adjunct worker: runs every configured pipeline from changelog topics into versioned/kv stores. */
export class Worker {
  state: WorkerState = 'CREATED';
  lastError?: AdjunctError;
  readonly logger: Logger;
  readonly metrics: AdjunctMetrics;
  readonly workerId: string;
  readonly config: AdjunctConfig;
  private cassandra?: Client;
  private kafka?: Kafka;
  private admin?: Admin;
  private producer?: Producer;
  private registry?: SchemaRegistry;
  private startedAt: Date | null = null;
  readonly runners = new Map<string, PipelineRunner>();
  private statusTable?: PipelineStatusTable;

  constructor(
    private readonly loaded: LoadedConfig,
    private readonly options: WorkerOptions = {},
  ) {
    this.config = loaded.config;
    this.logger = options.logger ?? createLogger(this.config.worker.logLevel);
    this.metrics = options.metrics ?? new AdjunctMetrics();
    this.workerId = options.workerId ?? `${os.hostname()}-${process.pid}`;
  }

  /** The shared Cassandra client (after start). */
  get cassandraClient(): Client | undefined {
    return this.cassandra;
  }

  /** Connects, prepares schema and starts pipelines (dependents only after their bootstrap pipelines are READY). */
  async start(): Promise<void> {
    this.state = 'STARTING';
    this.startedAt = new Date();
    const cfg = this.config;
    try {
      // Every identifier and table option is validated before any CQL is built or sent (also for configs built in code).
      for (const spec of cfg.pipelines) {
        renderTableOptions(spec.store.tableOptions as TableOptions | undefined, spec.store.ttlSeconds);
        tableNameForStore(spec.store.name);
      }
      this.cassandra = createCassandra(cfg.cassandra);
      await this.cassandra.connect();
      await ensureKeyspaceFor(this.cassandra, cfg.cassandra);
      await ensureCatalog(this.cassandra, cfg.cassandra.keyspace);
      const catalog = new StoreCatalog(this.cassandra, cfg.cassandra.keyspace);
      this.statusTable = new PipelineStatusTable(this.cassandra, cfg.cassandra.keyspace);
      this.kafka = createKafka(cfg.kafka, this.logger);
      this.admin = this.kafka.admin();
      await this.admin.connect();
      if (cfg.registry) this.registry = createRegistry(cfg.registry);
      if (cfg.pipelines.some((p) => p.errors.deadLetterQueue)) {
        this.producer = this.kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
        await this.producer.connect();
      }
      // With batching, maxInFlight bounds Cassandra requests (batches); the record semaphore allows them to be full.
      const semaphore = new Semaphore(recordsInFlight(cfg));
      for (const spec of cfg.pipelines) {
        const wiring = new StoreWiring(this.cassandra, cfg.cassandra, spec, {
          timeoutMs: spec.errors.retryTimeout,
          maxDelayMs: spec.errors.retryMaxDelay,
          shouldStop: () => this.state === 'STOPPING' || this.state === 'STOPPED',
          onRetry: (e, attempt, delayMs) => {
            this.metrics.retries.inc({ pipeline: spec.name, stage: 'write' });
            if (attempt === 1 || attempt % 10 === 0) this.logger.warn({ pipeline: spec.name, attempt, delayMs, err: describeError(e) }, 'retriable Cassandra failure: retrying with backoff; offsets are not committed past it');
          },
        }, (j) => {
          this.metrics.streamTimeJumps.inc({ pipeline: spec.name });
          this.logger.warn(
            { pipeline: spec.name, topic: j.topic, partition: j.partition, from: j.from, to: j.to, historyRetentionMs: j.historyRetentionMs },
            `one record moved the stream time of ${j.topic}/${j.partition} from ${new Date(j.from).toISOString()} to ${new Date(j.to).toISOString()}, more than the history retention (${j.historyRetentionMs} ms): every older version of that partition expired at once; check for a stray event timestamp`,
          );
        }, cfg.worker.maxInFlight, cfg.registry);
        const entry = await catalog.register(wiring.catalogEntry());
        await wiring.ensureTable(entry.currentGeneration);
        const runner = new PipelineRunner({
          spec,
          kafka: this.kafka,
          admin: this.admin,
          baseGroupId: cfg.worker.groupId,
          catalog,
          status: this.statusTable,
          entry,
          keyConverter: createConverter(spec.keyConverter, 'key-convert', this.registry),
          valueConverter: createConverter(spec.valueConverter, 'value-convert', this.registry),
          extractor: await createExtractor(spec.extract, this.loaded.baseDir),
          writersFor: (g) => wiring.writerFactory(g),
          dropGeneration: (g) => wiring.dropTable(g),
          dlq: spec.errors.deadLetterQueue && this.producer ? new DeadLetterQueueReporter(this.producer, spec.errors.deadLetterQueue.topic, spec.name, spec.errors.deadLetterQueue.contextHeaders) : undefined,
          semaphore,
          logger: this.logger,
          metrics: this.metrics,
          workerId: this.workerId,
          commitIntervalMs: cfg.worker.commitInterval,
          partitionsConsumedConcurrently: cfg.worker.partitionsConsumedConcurrently,
          sessionTimeoutMs: cfg.kafka.sessionTimeout,
          heartbeatIntervalMs: cfg.kafka.heartbeatInterval,
          shutdownTimeoutMs: cfg.worker.shutdownTimeout,
          progressBar: this.options.progressBar ?? false,
          onFatal: (e) => this.fail(e),
        });
        this.runners.set(spec.name, runner);
      }
      // Start bootstrap pipelines first; dependents wait for the READY of what they depend on.
      const started = new Map<string, Promise<void>>();
      const startRunner = (name: string): Promise<void> => {
        let p = started.get(name);
        if (p) return p;
        const runner = this.runners.get(name)!;
        const spec = cfg.pipelines.find((x) => x.name === name)!;
        p = (async () => {
          if (spec.dependsOn.length) {
            this.logger.info({ pipeline: name, dependsOn: spec.dependsOn }, 'waiting for bootstrap pipelines to be READY');
            await Promise.all(spec.dependsOn.map(async (dep) => {
              await startRunner(dep);
              await this.runners.get(dep)!.whenReady();
            }));
          }
          if (this.state !== 'STARTING' && this.state !== 'RUNNING') return;
          await runner.start();
        })();
        started.set(name, p);
        return p;
      };
      for (const spec of cfg.pipelines) {
        // Dependents start in the background once what they depend on is READY; failures fail the worker.
        if (spec.dependsOn.length) void startRunner(spec.name).catch((e) => this.fail(asFatal(e)));
        else await startRunner(spec.name);
      }
      if (this.state === 'STARTING') this.state = 'RUNNING';
      this.logger.info({ workerId: this.workerId, pipelines: cfg.pipelines.map((p) => p.name) }, 'worker running');
    } catch (e) {
      this.fail(asFatal(e));
      throw this.lastError;
    }
  }

  /** Records a fatal failure: state FAILED; the process owner decides to stop (the CLI exits non-zero). */
  fail(e: AdjunctError): void {
    if (this.state === 'FAILED') return;
    this.lastError = e;
    this.state = 'FAILED';
    this.logger.error({ code: e.code, stage: e.stage, ...e.context, err: e.message }, 'worker failed');
    this.options.onFatal?.(e);
  }

  /** True when every bootstrap pipeline is READY. */
  isReady(): boolean {
    return this.state === 'RUNNING' && [...this.runners.values()].every((r) => r.isReady());
  }

  /** Looks up a pipeline runner by name. */
  runner(name: string): PipelineRunner {
    const r = this.runners.get(name);
    if (!r) throw new AdjunctError(`unknown pipeline ${name}`, { code: 'UNKNOWN_PIPELINE', stage: 'config' });
    return r;
  }

  /** Stops fetching, drains in-flight writes, commits, leaves the groups and closes clients (bounded by shutdownTimeout). */
  async stop(): Promise<void> {
    if (this.state === 'STOPPED' || this.state === 'STOPPING') return;
    const failed = this.state === 'FAILED';
    this.state = 'STOPPING';
    const timeout = this.config.worker.shutdownTimeout;
    const all = Promise.all([...this.runners.values()].map((r) => r.stop().catch((e) => this.logger.warn({ pipeline: r.name, err: describeError(e) }, 'stop failed'))));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, timeout + 5000)))]);
    clearTimeout(timer);
    await this.producer?.disconnect().catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
    await this.cassandra?.shutdown().catch(() => undefined);
    this.state = failed ? 'FAILED' : 'STOPPED';
    this.logger.info({ state: this.state }, 'worker stopped');
  }

  /** Status snapshot of the worker and every pipeline. */
  status(): WorkerStatus {
    return {
      workerId: this.workerId,
      state: this.state,
      startedAt: this.startedAt?.toISOString() ?? null,
      lastError: this.lastError?.message,
      pipelines: [...this.runners.values()].map((r) => r.status()),
    };
  }
}

function asFatal(e: unknown): AdjunctError {
  return asAdjunctError(e, (message, cause) => new AdjunctError(message, { code: 'WORKER_FAILED', cause }));
}
