import type { AdjunctConfig, PipelineSpec } from '../config/schema';

/**
 * What a pipeline's sink task is told (the config's view, some fields optional): options → defaults → compiled.
 * Built once per pipeline from the validated config by `sinkTaskOptionsFromConfig`; tests pass partial options.
 */
export interface SinkTaskOptions {
  /** Pipeline name (logs, metrics, error messages). */
  pipeline: string;
  /** `none` stops at the first bad record; `all` sends bad records to the DLQ. Never applies to infrastructure failures. */
  tolerance?: 'none' | 'all';
  /** Whether a dead-letter queue is configured (tolerance all requires one). */
  deadLetterQueue?: boolean;
  /** How long a failing dependency is retried before the task shows STALLED (it keeps retrying). */
  retryTimeoutMs?: number;
  /** Cap of one backoff delay. */
  retryMaxDelayMs?: number;
  /** A stall longer than this fails the pipeline (never dead-letters); undefined: stall for ever. */
  stallTimeoutMs?: number;
  /** What to do when the committed position fell off the log. */
  onOffsetOutOfRange?: 'reload' | 'fail' | 'latest';
  /** How often durable offsets are committed. */
  commitIntervalMs?: number;
  /** Upper bound of a drain on stop. */
  shutdownTimeoutMs?: number;
  /** Kafka session timeout of the consumer. */
  sessionTimeoutMs?: number;
  /** Kafka heartbeat interval; the loop heartbeats at least this often while it waits. */
  heartbeatIntervalMs?: number;
  /** Partitions whose batches are processed at the same time. */
  partitionsConsumedConcurrently?: number;
  /**
   * How long an assigned partition with records to read may go without a fetched batch before the task's consumer is
   * restarted from the committed offsets (the progress watchdog); undefined: 4 × the session timeout; 0: no watchdog.
   */
  progressTimeoutMs?: number;
  /** Most bytes one fetch returns per partition. */
  fetchMaxBytesPerPartition?: number;
  /** Most bytes one fetch returns. */
  fetchMaxBytes?: number;
}

/** Defaults of the optional options (the config schema has the same ones). */
export const SINK_TASK_DEFAULTS = {
  tolerance: 'none',
  deadLetterQueue: false,
  retryTimeoutMs: 300_000,
  retryMaxDelayMs: 30_000,
  stallTimeoutMs: undefined,
  onOffsetOutOfRange: 'reload',
  commitIntervalMs: 1_000,
  shutdownTimeoutMs: 30_000,
  sessionTimeoutMs: 30_000,
  heartbeatIntervalMs: 3_000,
  partitionsConsumedConcurrently: 8,
  progressTimeoutMs: undefined,
  fetchMaxBytesPerPartition: 256 << 10,
  fetchMaxBytes: 1 << 20,
} as const satisfies Omit<Required<SinkTaskOptions>, 'pipeline' | 'stallTimeoutMs' | 'progressTimeoutMs'> & {
  stallTimeoutMs: undefined;
  progressTimeoutMs: undefined;
};

/** The progress watchdog's default timeout: this many session timeouts. */
export const PROGRESS_TIMEOUT_SESSIONS = 4;

/** Options with every default applied. */
export type SinkTaskOptionsWithDefaults = Required<Omit<SinkTaskOptions, 'stallTimeoutMs' | 'progressTimeoutMs'>> & {
  stallTimeoutMs: number | undefined;
  progressTimeoutMs: number | undefined;
};

/** Settings of a sink task, compiled once: read by the loop, the error handler and the committer; never copied. */
export interface CompiledSinkTaskOptions extends Readonly<SinkTaskOptionsWithDefaults> {
  /** First backoff delay of a retry. */
  readonly retryInitialDelayMs: number;
  /** Longest wait for write budget before the loop heartbeats and looks at shutdown again. */
  readonly budgetWaitMs: number;
  /** Consumer fetch bounds (per partition, per fetch). */
  readonly fetch: { readonly maxBytesPerPartition: number; readonly maxBytes: number };
  /** The progress watchdog's timeout (0: off). */
  readonly watchdogTimeoutMs: number;
  /** Longest wait for one offset commit before it is given up and sent again by the next one. */
  readonly commitTimeoutMs: number;
}

/** Applies the defaults. */
export function addDefaults(o: SinkTaskOptions): SinkTaskOptionsWithDefaults {
  const defined = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return { ...SINK_TASK_DEFAULTS, ...defined } as SinkTaskOptionsWithDefaults;
}

/** Compiles options once (defaults, derived values, frozen). */
export function compileSinkTaskOptions(o: SinkTaskOptions): CompiledSinkTaskOptions {
  const d = addDefaults(o);
  if (d.tolerance === 'all' && !d.deadLetterQueue)
    throw new Error(`pipeline ${d.pipeline}: errors.tolerance all needs a dead-letter queue`);
  return Object.freeze({
    ...d,
    retryInitialDelayMs: Math.min(100, d.retryMaxDelayMs),
    budgetWaitMs: Math.max(1, Math.min(1_000, d.heartbeatIntervalMs)),
    fetch: Object.freeze({ maxBytesPerPartition: d.fetchMaxBytesPerPartition, maxBytes: d.fetchMaxBytes }),
    watchdogTimeoutMs: d.progressTimeoutMs ?? PROGRESS_TIMEOUT_SESSIONS * d.sessionTimeoutMs,
    commitTimeoutMs: Math.max(5_000, d.sessionTimeoutMs),
  });
}

/** The task options of one pipeline, taken from the validated config. */
export function sinkTaskOptionsFromConfig(config: AdjunctConfig, spec: PipelineSpec): SinkTaskOptions {
  return {
    pipeline: spec.name,
    tolerance: spec.errors.tolerance,
    deadLetterQueue: spec.errors.deadLetterQueue !== undefined,
    retryTimeoutMs: spec.errors.retryTimeout,
    retryMaxDelayMs: spec.errors.retryMaxDelay,
    stallTimeoutMs: spec.errors.stallTimeout,
    onOffsetOutOfRange: spec.onOffsetOutOfRange,
    commitIntervalMs: config.worker.commitInterval,
    shutdownTimeoutMs: config.worker.shutdownTimeout,
    sessionTimeoutMs: config.kafka.sessionTimeout,
    heartbeatIntervalMs: config.kafka.heartbeatInterval,
    partitionsConsumedConcurrently: config.worker.partitionsConsumedConcurrently,
    progressTimeoutMs: config.kafka.progressTimeout,
    fetchMaxBytesPerPartition: config.kafka.fetch.maxBytesPerPartition,
    fetchMaxBytes: config.kafka.fetch.maxBytes,
  };
}
