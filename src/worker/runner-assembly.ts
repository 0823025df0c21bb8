import type { Client } from 'cassandra-driver';
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { AdjunctConfig, PipelineSpec } from '../config/schema';
import { PipelineStatusTable } from '../catalog';
import { Clock } from '../clock';
import { createConverter } from '../converters';
import { AdjunctError, isRecordFailure, mayBeMissingTable } from '../errors';
import { createExtractor } from '../extract';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { DeadLetterQueueReporter } from '../sink/dlq-reporter';
import { PipelineParts } from '../sink/pipeline-parts';
import { RecordProcessor } from '../sink/record-processor';
import { StallMonitor } from '../sink/stall-monitor';
import { StallPolicy } from '../sink/stall-policy';
import { CompiledSinkTaskOptions, compileSinkTaskOptions, sinkTaskOptionsFromConfig } from '../sink/task-options';
import { WriteBudget } from '../sink/write-budget';
import { StoreRetryPolicy } from '../store/cassandra';
import { PipelineRunner } from './pipeline-runner';
import { StoreCatalogParts, prepareStore } from './store-setup';
import { StoreWiring, StreamTimeJump } from './store-wiring';

/** What every pipeline of the worker shares once connected. */
export interface SharedClients extends StoreCatalogParts {
  budget: WriteBudget;
}

/** What a worker lends to the assembly of its pipelines' runners: its connected clients, observability and callbacks. */
export interface RunnerAssemblyContext {
  config: AdjunctConfig;
  /** Folder the config was loaded from (extractor modules are resolved from it). */
  baseDir: string;
  cassandra: Client;
  kafka: Kafka;
  admin: Admin;
  /** The DLQ producer, when a pipeline has a dead letter queue. */
  producer?: Producer;
  registry?: SchemaRegistry;
  statusTable: PipelineStatusTable;
  shared: SharedClients;
  metrics: AdjunctMetrics;
  logger: Logger;
  clock: Clock;
  workerId: string;
  progressBar: boolean;
  /** The runner of a pipeline once built (a write that finds its table missing is reported to it). */
  runner: (name: string) => PipelineRunner | undefined;
  /** True once the worker is stopping: store write retries end. */
  stopping: () => boolean;
  /** True once the worker is stopping or gives its start up: start-up Kafka retries end. */
  startAborted: () => boolean;
  /** A pipeline failed (the worker decides: fail, or isolate the pipeline). */
  pipelineFailed: (name: string, e: AdjunctError) => void;
}

/**
 * The runner of one pipeline: its stall monitor, its store (table claimed, catalog entry, current table), its record
 * processor and DLQ, its task parts (settings compiled once) and its generations.
 */
export async function assembleRunner(spec: PipelineSpec, ctx: RunnerAssemblyContext): Promise<PipelineRunner> {
  const { config, shared, metrics } = ctx;
  const options = compileSinkTaskOptions(sinkTaskOptionsFromConfig(config, spec));
  const stall = new StallMonitor(
    { pipeline: spec.name, retryTimeoutMs: options.retryTimeoutMs, stallTimeoutMs: options.stallTimeoutMs },
    ctx.clock,
  );
  stall.onChange((stalled) => reportStallChange(ctx, spec.name, stalled, stall.cause));
  const writeLatency = metrics.writeLatency.labels(spec.name);
  const wiring = new StoreWiring(
    ctx.cassandra,
    config.cassandra,
    spec,
    storeRetry(ctx, options, stall),
    (j) => reportStreamTimeJump(ctx, spec.name, j),
    config.worker.maxInFlight,
    config.registry,
    (seconds) => writeLatency.observe(seconds),
  );
  const { entry, owner, currentTableLost } = await prepareStore(wiring, spec, config.worker.groupId, shared, ctx.workerId);
  const catalog = shared.generations.catalog;
  const processor = new RecordProcessor(
    createConverter(spec.keyConverter, 'key-convert', ctx.registry),
    createConverter(spec.valueConverter, 'value-convert', ctx.registry),
    await createExtractor(spec.extract, ctx.baseDir),
    { storeKeepsValueBytes: wiring.keepsValueBytes, storeKeepsKeyBytes: wiring.keepsKeyBytes },
  );
  const dlqSpec = spec.errors.deadLetterQueue;
  const dlq =
    dlqSpec && ctx.producer ? new DeadLetterQueueReporter(ctx.producer, dlqSpec.topic, spec.name, dlqSpec.contextHeaders) : undefined;
  const parts: PipelineParts = {
    options,
    kafka: ctx.kafka,
    admin: ctx.admin,
    processor,
    dlq,
    // Its own share of the worker's write budget: a pipeline whose writes stall leaves the others room to go on.
    budget: shared.budget.share(config.pipelines.length),
    stall,
    clock: ctx.clock,
    metrics,
    logger: ctx.logger,
  };
  return new PipelineRunner(parts, {
    spec,
    admin: ctx.admin,
    baseGroupId: config.worker.groupId,
    generations: shared.generations,
    generationPollMs: config.worker.generationPoll,
    status: ctx.statusTable,
    entry,
    writersFor: (g) => wiring.writerFactory(g, { tableMustExist: true }),
    ensureTable: (g) => wiring.ensureTable(g),
    tableExists: (g) => wiring.tableExists(g),
    currentTableLost,
    dropGeneration: async (g) => {
      // Never drop a table a live pipeline writes: re-read the entry and the owner right before the drop.
      const now = await catalog.get(spec.store.name);
      if (now === null) return;
      await shared.owners.requireDroppable(now, g, owner);
      await wiring.dropTable(g);
    },
    workerId: ctx.workerId,
    progressBar: ctx.progressBar,
    onFatal: (e) => ctx.pipelineFailed(spec.name, e),
    stopping: ctx.startAborted,
  });
}

/**
 * Store writes retry, under the pipeline's stall policy, every failure that is not the record's own (unavailable,
 * timeouts, dropped table, auth) for as long as it lasts: the pipeline stalls instead of skipping; shutdown or
 * errors.stallTimeout end it.
 * A write whose table is gone (TABLE_MISSING) also makes the runner re-follow the catalog, or rebuild a lost current table.
 */
function storeRetry(ctx: RunnerAssemblyContext, options: CompiledSinkTaskOptions, stall: StallMonitor): StoreRetryPolicy {
  const policy = new StallPolicy({
    pipeline: options.pipeline,
    stall,
    metrics: ctx.metrics,
    log: ctx.logger.child({ pipeline: options.pipeline }),
    clock: ctx.clock,
    initialDelayMs: options.retryInitialDelayMs,
    maxDelayMs: options.retryMaxDelayMs,
  });
  const retry = policy.retryPolicy({
    stage: 'write',
    isRetriable: (e) => !isRecordFailure(e),
    stopping: ctx.stopping,
    message: 'Cassandra failure: retrying with backoff; offsets are not committed past it (STALLED after errors.retryTimeout)',
  });
  return {
    ...retry,
    onRetry: (e, attempt, delayMs) => {
      retry.onRetry?.(e, attempt, delayMs);
      if (mayBeMissingTable(e) && attempt === 1) ctx.runner(options.pipeline)?.tableMissing();
    },
  };
}

function reportStreamTimeJump(ctx: RunnerAssemblyContext, pipeline: string, j: StreamTimeJump): void {
  ctx.metrics.streamTimeJumps.inc({ pipeline });
  ctx.logger.warn(
    { pipeline, topic: j.topic, partition: j.partition, from: j.from, to: j.to, historyRetentionMs: j.historyRetentionMs },
    `one record moved the stream time of ${j.topic}/${j.partition} from ${new Date(j.from).toISOString()} to ${new Date(j.to).toISOString()}, more than the history retention (${j.historyRetentionMs} ms): every older version of that partition expired at once; check for a stray event timestamp`,
  );
}

function reportStallChange(ctx: RunnerAssemblyContext, pipeline: string, stalled: boolean, cause: string | undefined): void {
  ctx.metrics.stalled.set({ pipeline }, stalled ? 1 : 0);
  if (stalled)
    ctx.logger.error({ pipeline, cause }, 'pipeline STALLED: a dependency is unavailable; retrying, nothing is committed past it');
  else ctx.logger.warn({ pipeline }, 'pipeline resumed: the dependency is back');
}
