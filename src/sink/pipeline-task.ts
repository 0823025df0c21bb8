import { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { PipelineSpec } from '../config/schema';
import { Converter } from '../converters';
import { AdjunctError, asAdjunctError, BadRecordError, ErrorStage, describeError } from '../errors';
import { Extracted, Extractor, isSkip } from '../extract';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { DeadLetterQueueReporter } from './dlq-reporter';
import { OffsetTracker } from './offset-tracker';
import { PartitionWriter, PartitionWriterFactory } from './partition-writer';
import { withRetry } from '../errors/retry';
import { Semaphore } from './semaphore';

export type { PipelineState, PartitionStatus, PipelineStatus } from './pipeline-status';
import type { PipelineState, PipelineStatus } from './pipeline-status';

/** Everything a pipeline task needs, built by the worker. */
export interface PipelineTaskDeps {
  spec: PipelineSpec;
  /** The topics this task subscribes to (the pipeline's list, or the current matches of its topicPattern). */
  topics: string[];
  kafka: Kafka;
  groupId: string;
  keyConverter: Converter;
  valueConverter: Converter;
  extractor: Extractor;
  writers: PartitionWriterFactory;
  dlq?: DeadLetterQueueReporter;
  semaphore: Semaphore;
  logger: Logger;
  metrics: AdjunctMetrics;
  commitIntervalMs: number;
  partitionsConsumedConcurrently: number;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** Called when the pipeline fails fatally. */
  onFatal?: (e: AdjunctError) => void;
}

interface PartitionState {
  topic: string;
  partition: number;
  writer: PartitionWriter;
  tracker: OffsetTracker;
  committed: bigint | null;
  /** High watermark of the partition as of the last fetched batch. */
  high: bigint | null;
  /** Records that failed with tolerance none: they stay pending on purpose, so the commit never passes them. */
  stuck: number;
}

const tpKey = (t: string, p: number) => `${t}\u0000${p}`;

/** Records between the committed offset and the log end. */
const lagOf = (high: bigint, committed: bigint): number => Number(high > committed ? high - committed : 0n);

/**
 * One pipeline's sink task: consume → decode → extract → write → commit. Records of a partition are issued in
 * offset order; writes of all partitions share a bounded semaphore (backpressure); offsets are committed only up
 * to the first record that is not durable yet, together with the writer's stream time as of that offset.
 */
export class PipelineTask {
  state: PipelineState = 'CREATED';
  lastError?: AdjunctError;
  readonly counts = { consumed: 0, written: 0, skipped: 0, deadLettered: 0, expired: 0 };
  private consumer?: Consumer;
  private readonly partitions = new Map<string, PartitionState>();
  private readonly opening = new Map<string, Promise<PartitionState>>();
  private commitTimer?: NodeJS.Timeout;
  private committing: Promise<void> = Promise.resolve();
  private stopping = false;
  private readonly log: Logger;
  /** Metric children bound to this pipeline once (label lookups per record are measurable). */
  private readonly m;

  constructor(private readonly d: PipelineTaskDeps) {
    this.log = d.logger.child({ pipeline: d.spec.name });
    const pipeline = d.spec.name;
    this.m = {
      consumed: d.metrics.consumed.labels(pipeline),
      written: d.metrics.written.labels(pipeline),
      skipped: d.metrics.skipped.labels(pipeline),
      notPut: d.metrics.notPut.labels(pipeline),
      writeLatency: d.metrics.writeLatency.labels(pipeline),
    };
  }

  /** Pipeline name. */
  get name(): string {
    return this.d.spec.name;
  }

  /** Joins the group and starts consuming. */
  async start(): Promise<void> {
    const consumer = this.d.kafka.consumer({
      groupId: this.d.groupId,
      sessionTimeout: this.d.sessionTimeoutMs,
      heartbeatInterval: this.d.heartbeatIntervalMs,
      maxBytesPerPartition: 1 << 20,
      maxBytes: 4 << 20,
      allowAutoTopicCreation: false,
      retry: { retries: 10 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (e) => this.onGroupJoin(e.payload.memberAssignment));
    consumer.on(consumer.events.REBALANCING, () => {
      this.log.info('rebalance started: committing durable offsets');
      void this.commit().catch(() => undefined);
    });
    consumer.on(consumer.events.CRASH, (e) => {
      const err = new AdjunctError(`consumer crashed: ${describeError(e.payload.error)}`, { code: 'CONSUMER_CRASH', stage: 'consume', retriable: false, cause: e.payload.error });
      if (!e.payload.restart) this.fail(err);
      else this.log.warn({ err: describeError(e.payload.error) }, 'consumer crashed, kafkajs restarts it');
    });
    await consumer.connect();
    // A group without committed offsets starts at the earliest one: a changelog is complete only from its beginning.
    await consumer.subscribe({ topics: this.d.topics, fromBeginning: true });
    this.state = 'RUNNING';
    this.commitTimer = setInterval(() => void this.commit().catch((e) => this.log.warn({ err: describeError(e) }, 'commit failed; will retry')), this.d.commitIntervalMs);
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.d.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.eachBatch(payload),
    });
    this.log.info({ topics: this.d.topics, groupId: this.d.groupId }, 'pipeline started');
  }

  private onGroupJoin(assignment: Record<string, number[]>): void {
    const keep = new Set<string>();
    for (const [t, ps] of Object.entries(assignment)) for (const p of ps) keep.add(tpKey(t, p));
    for (const [k, st] of this.partitions) {
      if (!keep.has(k)) {
        this.partitions.delete(k);
        this.log.info({ topic: st.topic, partition: st.partition }, 'partition revoked');
        void st.writer.close().catch(() => undefined);
      }
    }
    this.log.info({ assignment }, 'partitions assigned');
  }

  private async partitionState(topic: string, partition: number): Promise<PartitionState> {
    const k = tpKey(topic, partition);
    const existing = this.partitions.get(k);
    if (existing) return existing;
    let p = this.opening.get(k);
    if (!p) {
      p = (async () => {
        const writer = await this.d.writers.open(topic, partition);
        const st: PartitionState = { topic, partition, writer, tracker: new OffsetTracker(), committed: null, stuck: 0, high: null };
        this.partitions.set(k, st);
        return st;
      })().finally(() => this.opening.delete(k));
      this.opening.set(k, p);
    }
    return p;
  }

  private async eachBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (this.stopping || this.state === 'FAILED') return;
    const end = this.d.metrics.batchLatency.startTimer({ pipeline: this.name });
    const st = await this.partitionState(batch.topic, batch.partition);
    st.high = BigInt(batch.highWatermark);
    let lastHeartbeat = Date.now();
    for (const message of batch.messages) {
      if (!isRunning() || isStale() || this.stopping || this.isFailed()) break;
      this.counts.consumed++;
      this.m.consumed.inc();
      const offset = BigInt(message.offset);
      let extracted: Extracted | null = null;
      try {
        extracted = await this.decodeAndExtract(batch.topic, batch.partition, message, st.writer.streamTime());
      } catch (e) {
        const err = asAdjunct(e, 'extract');
        const rec = st.tracker.begin(offset, st.writer.streamTime());
        if (this.interruptedByShutdown(err)) {
          st.stuck++; // not a bad record: it stays uncommitted and is processed again after the restart
          break;
        }
        resolveOffset(message.offset);
        if (await this.handleBadRecord(batch.topic, batch.partition, message, err)) st.tracker.complete(rec);
        else st.stuck++;
        continue;
      }
      if (extracted === null) {
        st.tracker.complete(st.tracker.begin(offset, st.writer.streamTime()));
        resolveOffset(message.offset);
        continue;
      }
      while (!(await this.d.semaphore.acquire(1000))) {
        await heartbeat();
        lastHeartbeat = Date.now();
        if (!isRunning() || this.stopping) return;
      }
      this.d.metrics.inFlight.inc();
      const timer = this.m.writeLatency.startTimer();
      let issued;
      try {
        issued = st.writer.write(extracted.key, extracted.value, extracted.timestamp);
      } catch (e) {
        issued = { streamTimeAfter: st.writer.streamTime(), done: Promise.reject(e) };
      }
      const rec = st.tracker.begin(offset, issued.streamTimeAfter);
      resolveOffset(message.offset);
      const msg = message;
      issued.done.then(
        (outcome) => {
          timer();
          if (outcome === 'expired') {
            this.counts.expired++;
            this.m.notPut.inc();
          } else {
            this.counts.written++;
            this.m.written.inc();
          }
          st.tracker.complete(rec);
          this.d.metrics.inFlight.dec();
          this.d.semaphore.release();
        },
        async (e) => {
          timer();
          const err = asAdjunct(e, 'write');
          try {
            if (this.interruptedByShutdown(err)) st.stuck++;
            else if (await this.handleBadRecord(batch.topic, batch.partition, msg, err)) st.tracker.complete(rec);
            else st.stuck++;
          } finally {
            this.d.metrics.inFlight.dec();
            this.d.semaphore.release();
          }
        },
      );
      if (Date.now() - lastHeartbeat > this.d.heartbeatIntervalMs) {
        await heartbeat();
        lastHeartbeat = Date.now();
      }
    }
    end();
  }

  /** Decodes and extracts one record, retrying transient failures (registry down); returns null for a skip. */
  private async decodeAndExtract(topic: string, partition: number, m: KafkaMessage, streamTime: number): Promise<Extracted | null> {
    const errors = this.d.spec.errors;
    const attempt = async (): Promise<Extracted | null> => {
      const key = await this.d.keyConverter.decode(m.key ?? null);
      const value = await this.d.valueConverter.decode(m.value ?? null);
      let r;
      try {
        const headers = (m.headers ?? {}) as Record<string, Buffer | string | undefined>;
        r = await this.d.extractor.extract({ topic, partition, offset: m.offset, timestamp: Number(m.timestamp), key, value, headers, streamTime: Number.isFinite(streamTime) ? streamTime : undefined });
      } catch (e) {
        throw asAdjunct(e, 'extract');
      }
      if (isSkip(r)) {
        this.counts.skipped++;
        this.m.skipped.inc();
        this.log.debug({ topic, partition, offset: m.offset, reason: r.reason }, 'record skipped');
        return null;
      }
      return r;
    };
    // Fast path: one attempt without building retry options per record; only a retriable failure (registry
    // unreachable) enters the backoff loop, which starts with a fresh attempt.
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof AdjunctError && e.retriable)) throw e;
    }
    return withRetry(
      attempt,
      {
        timeoutMs: errors.retryTimeout,
        maxDelayMs: errors.retryMaxDelay,
        isRetriable: (e) => e instanceof AdjunctError && e.retriable,
        shouldStop: () => this.stopping,
        onRetry: (e, attempt, delay) => {
          this.d.metrics.retries.inc({ pipeline: this.name, stage: (e as AdjunctError).stage ?? 'consume' });
          this.log.warn({ topic, partition, offset: m.offset, attempt, delayMs: delay, err: describeError(e) }, 'transient failure, retrying');
        },
      },
    );
  }

  /** A retry loop cut short by shutdown: the record is left uncommitted, never dead-lettered. */
  private interruptedByShutdown(err: AdjunctError): boolean {
    return this.stopping && err.code === 'RETRIES_EXHAUSTED';
  }

  /** Applies error tolerance: DLQ the record and return true, or fail the pipeline and return false. */
  private async handleBadRecord(topic: string, partition: number, m: KafkaMessage, err: AdjunctError): Promise<boolean> {
    const stage = err.stage ?? 'write';
    this.d.metrics.errors.inc({ pipeline: this.name, stage, class: err.code });
    const where = `${topic}/${partition}@${m.offset}`;
    if (this.d.spec.errors.tolerance === 'all' && this.d.dlq) {
      try {
        await this.d.dlq.report({ topic, partition, offset: m.offset, timestamp: m.timestamp, key: m.key ?? null, value: m.value ?? null, headers: m.headers }, err, stage);
      } catch (e) {
        this.fail(new AdjunctError(`cannot write record ${where} to the dead-letter queue: ${describeError(e)}`, { code: 'DLQ_FAILED', stage, cause: e, context: { topic, partition, offset: m.offset } }));
        return false;
      }
      this.counts.deadLettered++;
      this.d.metrics.deadLettered.inc({ pipeline: this.name, stage });
      this.log.warn({ topic, partition, offset: m.offset, stage, code: err.code, err: err.message }, 'record sent to dead-letter queue');
      return true;
    }
    this.fail(new AdjunctError(`pipeline ${this.name} stopped at ${where} (stage ${stage}): ${err.message}`, { code: err.code, stage, cause: err, context: { topic, partition, offset: m.offset } }));
    return false;
  }

  /** Moves the pipeline to FAILED (tolerance none or fatal error); offsets stay at the last durable record. */
  fail(err: AdjunctError): void {
    if (this.state === 'FAILED') return;
    this.lastError = err;
    this.state = 'FAILED';
    this.log.error({ code: err.code, stage: err.stage, ...err.context, err: err.message }, 'pipeline failed');
    this.d.onFatal?.(err);
  }

  /** Commits, for every owned partition, the offset after the last durable record (checkpointing stream time first). */
  commit(): Promise<void> {
    // A failed commit (e.g. during a rebalance) must not poison the chain: the next commit retries from the watermark.
    const next = this.committing.catch(() => undefined).then(() => this.doCommit());
    this.committing = next;
    return next;
  }

  private async doCommit(): Promise<void> {
    if (!this.consumer) return;
    const offsets: { topic: string; partition: number; offset: string }[] = [];
    const done: [PartitionState, bigint][] = [];
    for (const st of this.partitions.values()) {
      const wm = st.tracker.watermark();
      if (!wm || (st.committed !== null && wm.offset <= st.committed)) continue;
      await st.writer.checkpoint(wm.streamTime);
      offsets.push({ topic: st.topic, partition: st.partition, offset: wm.offset.toString() });
      done.push([st, wm.offset]);
    }
    if (!offsets.length) return;
    await this.consumer.commitOffsets(offsets);
    for (const [st, o] of done) {
      st.committed = o;
      this.d.metrics.committed.set({ pipeline: this.name, topic: st.topic, partition: String(st.partition) }, Number(o));
      if (st.high !== null) this.d.metrics.lag.set({ pipeline: this.name, topic: st.topic, partition: String(st.partition) }, lagOf(st.high, o));
    }
  }

  /** Pauses fetching (admin route). */
  pause(): void {
    this.consumer?.pause(this.d.topics.map((topic) => ({ topic })));
    if (this.state === 'RUNNING') this.state = 'PAUSED';
  }

  /** Resumes fetching. */
  resume(): void {
    this.consumer?.resume(this.d.topics.map((topic) => ({ topic })));
    if (this.state === 'PAUSED') this.state = 'RUNNING';
  }

  /** Stops fetching, waits for in-flight writes (bounded), commits, leaves the group. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.state === 'STOPPED') return;
    this.stopping = true;
    const failed = this.state === 'FAILED';
    this.state = failed ? 'FAILED' : 'STOPPING';
    if (this.commitTimer) clearInterval(this.commitTimer);
    const deadline = Date.now() + timeoutMs;
    this.consumer?.pause(this.d.topics.map((topic) => ({ topic })));
    while (Date.now() < deadline && [...this.partitions.values()].some((p) => p.tracker.inFlight > p.stuck)) {
      await new Promise((r) => setTimeout(r, 50));
    }
    try {
      await this.commit();
    } catch (e) {
      this.log.warn({ err: describeError(e) }, 'final commit failed');
    }
    await this.consumer?.disconnect().catch(() => undefined);
    for (const p of this.partitions.values()) await p.writer.close().catch(() => undefined);
    this.partitions.clear();
    if (!failed) this.state = 'STOPPED';
    this.log.info({ counts: this.counts }, 'pipeline stopped');
  }

  /** A method, not an inline comparison: `state` changes across awaits, which TypeScript's narrowing ignores. */
  private isFailed(): boolean {
    return this.state === 'FAILED';
  }

  /** Status snapshot for /status and the CLI. */
  status(): PipelineStatus {
    return {
      name: this.name,
      state: this.state,
      lastError: this.lastError?.message,
      counts: { ...this.counts },
      partitions: [...this.partitions.values()].map((p) => ({
        topic: p.topic,
        partition: p.partition,
        committedOffset: p.committed?.toString() ?? null,
        endOffset: p.high?.toString() ?? null,
        lag: p.high !== null && p.committed !== null ? lagOf(p.high, p.committed) : null,
        inFlight: p.tracker.inFlight,
        streamTime: finiteOrNull(p.writer.streamTime()),
      })),
    };
  }
}

const finiteOrNull = (n: number): number | null => (Number.isFinite(n) ? n : null);

/** A failure of one record, tagged with its stage; unexpected throws count as bad records. */
function asAdjunct(e: unknown, stage: ErrorStage): AdjunctError {
  return asAdjunctError(e, (message, cause) => new BadRecordError(message, { stage, cause }), stage);
}
