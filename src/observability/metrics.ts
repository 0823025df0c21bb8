import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every Prometheus metric adjunct exports, on its own registry. */
export class AdjunctMetrics {
  readonly registry = new Registry();
  readonly consumed = new Counter({
    name: 'adjunct_records_consumed_total',
    help: 'Records consumed',
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly written = new Counter({
    name: 'adjunct_records_written_total',
    help: 'Records written to the store',
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly skipped = new Counter({
    name: 'adjunct_records_skipped_total',
    help: 'Records skipped by filters or extractors',
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly notPut = new Counter({
    name: 'adjunct_records_expired_total',
    help: 'Versioned writes older than the grace period (NOT_PUT)',
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly streamTimeJumps = new Counter({
    name: 'adjunct_stream_time_jumps_total',
    help: "Records that moved a partition's stream time forward by more than the history retention at once",
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly deadLettered = new Counter({
    name: 'adjunct_records_dead_lettered_total',
    help: 'Records sent to the DLQ',
    labelNames: ['pipeline', 'stage'],
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: 'adjunct_errors_total',
    help: 'Errors by stage and class',
    labelNames: ['pipeline', 'stage', 'class'],
    registers: [this.registry],
  });
  readonly retries = new Counter({
    name: 'adjunct_retries_total',
    help: 'Retried operations',
    labelNames: ['pipeline', 'stage'],
    registers: [this.registry],
  });
  readonly lag = new Gauge({
    name: 'adjunct_consumer_lag',
    help: 'End offset minus committed offset',
    labelNames: ['pipeline', 'topic', 'partition'],
    registers: [this.registry],
  });
  readonly committed = new Gauge({
    name: 'adjunct_committed_offset',
    help: 'Last committed offset',
    labelNames: ['pipeline', 'topic', 'partition'],
    registers: [this.registry],
  });
  readonly bootstrapProgress = new Gauge({
    name: 'adjunct_bootstrap_progress_ratio',
    help: 'Bootstrap progress 0..1',
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly generation = new Gauge({
    name: 'adjunct_store_generation',
    help: 'Current table generation of the store',
    labelNames: ['pipeline', 'store'],
    registers: [this.registry],
  });
  /** Where the in-flight gauges read their values on scrape (the worker's shared write budget). */
  private writesInFlight: { readonly inFlight: number; readonly inFlightBytes: number } | undefined;
  readonly inFlight: Gauge = new Gauge({
    name: 'adjunct_inflight_writes',
    help: 'In-flight Cassandra writes',
    registers: [this.registry],
    collect: (): void => this.inFlight.set(this.writesInFlight?.inFlight ?? 0),
  });
  readonly inFlightBytes: Gauge = new Gauge({
    name: 'adjunct_inflight_write_bytes',
    help: 'Key and value bytes of in-flight Cassandra writes',
    registers: [this.registry],
    collect: (): void => this.inFlightBytes.set(this.writesInFlight?.inFlightBytes ?? 0),
  });
  readonly stalled = new Gauge({
    name: 'adjunct_pipeline_stalled',
    help: '1 while the pipeline is STALLED on an unavailable dependency (it retries and resumes by itself)',
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly missingTopics = new Gauge({
    name: 'adjunct_source_topics_missing',
    help: 'Literal source topics of the pipeline that no longer exist in the cluster (deleted under it), at the last topic refresh',
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly lostOffsets = new Counter({
    name: 'adjunct_offsets_lost_total',
    help: 'Offsets deleted by retention before the pipeline read them (offset out of range at run time)',
    labelNames: ['pipeline', 'topic', 'partition'],
    registers: [this.registry],
  });
  readonly consumerRestarts = new Counter({
    name: 'adjunct_consumer_restarts_total',
    help: 'Task consumers restarted by the progress watchdog (assigned partitions with records to read, no fetched batch for kafka.progressTimeout)',
    labelNames: ['pipeline'],
    registers: [this.registry],
  });
  readonly batchLatency = new Histogram({
    name: 'adjunct_batch_seconds',
    help: 'Time to process a fetched batch',
    labelNames: ['pipeline'],
    buckets: [0.001, 0.005, 0.02, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  readonly writeLatency = new Histogram({
    name: 'adjunct_write_seconds',
    help: 'Store write request latency: one batch or one row, retries and splits included',
    labelNames: ['pipeline'],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2],
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'adjunct_' });
  }

  /** The in-flight gauges report this budget's counts when scraped (nothing is counted per record). */
  reportWritesInFlight(budget: { readonly inFlight: number; readonly inFlightBytes: number }): void {
    this.writesInFlight = budget;
  }
}
