import { KafkaMessage } from 'kafkajs';
import { Clock } from '../clock';
import { AdjunctError, asAdjunctError, BadRecordError, describeError } from '../errors';
import { Extracted, isSkip } from '../extract';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { BatchControl, BatchControlParts, batchControl, FetchedBatch } from './batch-control';
import { ErrorHandler } from './error-handler';
import { OffsetLossGuard } from './offset-loss-guard';
import { openPartitionFor } from './partition-opening';
import { PartitionRegistry } from './partition-registry';
import type { PartitionState } from './partition-state';
import { IssuedRecord, WriteSettlement } from './issued-record';
import { Processed, RecordProcessor } from './record-processor';
import { recordSize } from './sink-record';
import { StallMonitor } from './stall-monitor';
import { TaskLifecycle } from './task-lifecycle';
import { CompiledSinkTaskOptions } from './task-options';
import { TaskCounts } from './task-status';
import { WriteBudget } from './write-budget';

/**
 * Records handed over in one batch between two yields to I/O. A fetch of ≈ 3,500 records is ≈ 50 ms of synchronous
 * work, while the 64 batches in flight are ≈ 20 ms of Cassandra's: without the yield, acknowledgements waited and
 * Cassandra's queue ran dry (300k bench pairs: 38.1k against 33.8k records/s, means of 8, worker and Cassandra CPU
 * per record lower too).
 */
export const YIELD_EVERY_RECORDS = 256;

/** Records (and key + value bytes) a partition may hold behind a pending one, in write budgets. */
export const HELD_PER_BUDGET = 4;

/** Lets I/O callbacks run (write acknowledgements, so the batcher sends the next batches) before going on. */
const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Collaborators of the loop, built once by the task. */
export interface SinkLoopParts {
  partitions: PartitionRegistry;
  processor: RecordProcessor;
  errors: ErrorHandler;
  guard: OffsetLossGuard;
  budget: WriteBudget;
  lifecycle: TaskLifecycle;
  stall: StallMonitor;
  clock: Clock;
  metrics: AdjunctMetrics;
  log: Logger;
  counts: TaskCounts;
}

/** The record is settled (skipped or dead-lettered): go on with the next one. */
const SETTLED = Symbol('settled');
/** The record is left pending on purpose: stop this batch. */
const STOP = Symbol('stop');
/** A converted record: what to write, or settled, or stop. */
type Converted = Extracted | typeof SETTLED | typeof STOP;

/**
 * Kafka Connect's WorkerSinkTask iteration for one fetched batch: convert each record, deliver it to the store under
 * the write budget, track it until durable. Records of a partition are issued in offset order.
 */
export class SinkLoop {
  private readonly m;
  private readonly controlParts: BatchControlParts;
  /** The loop's answer to settled writes (one object for every record). */
  private readonly settlement: WriteSettlement = {
    durable: (r) => this.durable(r),
    failed: (r, e) => {
      // A fenced partition's write was dropped or cut short: the record stays pending for the partition's next owner.
      if (r.st.fenced) return this.p.budget.release(r.size);
      void this.settleFailure(r, asBadRecord(e, 'write')).finally(() => this.p.budget.release(r.size));
    },
    abandoned: (r) => this.p.lifecycle.stopping || this.p.lifecycle.failed || r.st.fenced,
  };

  /** Bounds on what a partition holds behind a pending record (HELD_PER_BUDGET write budgets), fixed with the budget. */
  private readonly heldMaxCount: number;
  private readonly heldMaxBytes: number;

  /** Durable writes not yet added to the written counter: added once per acknowledged batch (a labelled inc hashes its labels). */
  private writtenPending = 0;
  private readonly reportWritten = (): void => {
    this.m.written.inc(this.writtenPending);
    this.writtenPending = 0;
  };

  constructor(
    private readonly o: CompiledSinkTaskOptions,
    private readonly p: SinkLoopParts,
  ) {
    const pipeline = o.pipeline;
    this.controlParts = { clock: p.clock, heartbeatIntervalMs: o.heartbeatIntervalMs, lifecycle: p.lifecycle, log: p.log };
    this.heldMaxCount = HELD_PER_BUDGET * p.budget.maxCount;
    this.heldMaxBytes = HELD_PER_BUDGET * p.budget.maxBytes;
    this.m = {
      consumed: p.metrics.consumed.labels(pipeline),
      written: p.metrics.written.labels(pipeline),
      skipped: p.metrics.skipped.labels(pipeline),
      notPut: p.metrics.notPut.labels(pipeline),
    };
  }

  /**
   * Processes one fetched batch: guard against lost offsets, then convert → deliver each record. The consumer position
   * is resolved once per batch (and before any wait), up to the last record handed over; commits follow durability.
   */
  async eachBatch(b: FetchedBatch): Promise<void> {
    if (!this.p.lifecycle.accepting) return;
    const endTimer = this.p.metrics.batchLatency.startTimer({ pipeline: this.o.pipeline });
    const st = await openPartitionFor(b, this.p);
    if (st === null) return;
    this.rejoinIfFenced(st);
    st.high = BigInt(b.batch.highWatermark);
    const messages = b.batch.messages;
    const first = messages[0];
    // Where the fetch starts, transaction markers and aborted records included: they are no gap in the log.
    if (!first || !(await this.p.guard.admit(st, BigInt(b.batch.firstOffset?.() ?? first.offset)))) return;
    const control = batchControl(b, st, this.controlParts);
    let consumed = 0;
    let sinceYield = 0;
    let last: KafkaMessage | null = null;
    try {
      for (const message of messages) {
        if (!control.keepGoing()) break;
        const record = new IssuedRecord(this.settlement, st, message, control.heartbeat);
        consumed++;
        // Synchronous converters and a free write budget take no promise per record.
        let converted = this.convert(record, control);
        if (converted instanceof Promise) {
          converted = await converted;
          control.yielded();
        }
        if (converted === STOP) break;
        if (converted !== SETTLED) {
          // A conversion that waited (a registry re-read, retries) let a stop, a seek or a rebalance happen meanwhile.
          if (!control.keepGoing()) break;
          let delivered = this.deliver(record, converted, control);
          if (delivered instanceof Promise) {
            delivered = await delivered;
            control.yielded();
          }
          if (!delivered) break;
        }
        control.handedOver(message.offset);
        last = message;
        if (++sinceYield >= YIELD_EVERY_RECORDS) {
          sinceYield = 0;
          await yieldToIo();
          control.yielded();
        }
        if (control.heartbeatDue()) {
          await control.heartbeat();
          control.yielded();
        }
      }
    } finally {
      control.resolve();
      if (last !== null) st.expectedNext = BigInt(last.offset) + 1n;
      // Markers and aborted records after the last record are passed over with it once the whole batch was handed over.
      const end = last !== null && last === messages[messages.length - 1] ? b.batch.lastOffset?.() : undefined;
      if (end !== undefined && end !== last!.offset) {
        b.resolveOffset(end);
        st.passOver(BigInt(end) + 1n);
      }
      if (consumed > 0) {
        this.p.counts.consumed += consumed;
        this.m.consumed.inc(consumed);
      }
    }
    endTimer();
    this.rejoinIfFenced(st);
  }

  /**
   * kafkajs fetched records of a partition that it hands over to no one, from `firstOffset` to `lastOffset`: only
   * transaction markers or aborted records (a batch it does not give to `eachBatch` and resolves itself). Nothing is
   * written for them, but the position after them is committed once every earlier record is durable: else a
   * transactional changelog whose log ends with a commit marker is never read to its end offset, and its store never
   * becomes READY. A fetch that does not start where the partition was is judged by the offset-loss guard first.
   */
  passedOver(topic: string, partition: number, firstOffset: string | null, lastOffset: string): void {
    if (!this.p.lifecycle.accepting) return;
    const from = firstOffset === null ? null : BigInt(firstOffset);
    void this.passOverFetched(topic, partition, from, BigInt(lastOffset) + 1n).catch((e) =>
      this.p.log.warn(
        { topic, partition, err: describeError(e) },
        'records passed over (transaction markers) not noted: the partition commits past them with its next record',
      ),
    );
  }

  private async passOverFetched(topic: string, partition: number, from: bigint | null, next: bigint): Promise<void> {
    // A partition whose first fetch held no record is opened here: its position is committed like any other.
    const st = this.p.partitions.get(topic, partition) ?? (await this.p.partitions.open(topic, partition));
    if (st.fenced || !this.p.lifecycle.accepting) return;
    if (from !== null && !(await this.p.guard.admit(st, from))) return;
    if (!st.fenced) st.passOver(next);
  }

  /**
   * A partition fenced by a heartbeat failure (one a retry's backoff swallowed, or seen by an earlier batch) starts
   * over only at the re-join's assignment (GROUP_JOIN): its failure is thrown to kafkajs, which re-joins on it.
   */
  private rejoinIfFenced(st: PartitionState): void {
    if (st.fenced && st.fencedBy !== undefined) throw st.fencedBy;
  }

  /**
   * Decodes and extracts: synchronously when the converters and extractor allow, else retrying an unavailable registry.
   * A skip is settled at once, a failure goes to tolerance.
   */
  private convert(record: IssuedRecord, c: BatchControl): Converted | Promise<Converted> {
    let out: Processed | Promise<Processed>;
    try {
      out = this.p.processor.process(record, record.st.writer.observedStreamTime());
    } catch (e) {
      // The retry loop tells record failures (settled at once) from retriable ones.
      out = Promise.reject(e);
    }
    return out instanceof Promise ? this.convertRetrying(record, c, out) : this.converted(record, out);
  }

  private async convertRetrying(record: IssuedRecord, c: BatchControl, first: Promise<Processed>): Promise<Converted> {
    const st = record.st;
    try {
      const out = await this.p.errors.retry(
        first,
        async () => this.p.processor.process(record, st.writer.observedStreamTime()),
        'value-convert',
        c.heartbeat,
        () => st.fenced,
      );
      return this.converted(record, out);
    } catch (e) {
      if (st.fenced) return STOP; // left for the partition's next owner, never dead-lettered
      this.track(record);
      return (await this.settleFailure(record, asBadRecord(e, 'extract'))) ? SETTLED : STOP;
    }
  }

  /** A skip is settled (and counted) at once; anything else goes on to be written. */
  private converted(record: IssuedRecord, out: Processed): Converted {
    if (!isSkip(out)) return out;
    this.p.counts.skipped++;
    this.m.skipped.inc();
    this.p.log.debug({ topic: record.topic, partition: record.partition, offset: record.offset, reason: out.reason }, 'record skipped');
    record.st.tracker.complete(this.track(record));
    return SETTLED;
  }

  /**
   * Issues the write under the write budget (waiting, heartbeating, when it is full or when its partition holds too
   * many records behind a pending one); false when the task stops or the partition is fenced while waiting.
   */
  private deliver(record: IssuedRecord, x: Extracted, c: BatchControl): boolean | Promise<boolean> {
    const size = recordSize(record);
    if (this.holdsTooMuch(record.st)) return this.deliverWhenReleased(record, x, c);
    if (!this.p.budget.tryAcquire(size)) return this.deliverAfterWait(record, x, c, size);
    record.size = size;
    this.issueUnderBudget(record, x);
    return true;
  }

  /**
   * Records written behind one still pending (a dead letter retried while the DLQ is down, a row retried during an
   * outage of its replicas) keep their bytes until it settles: past a bound (4× the write budget) the partition waits
   * for it, as Kafka Connect's consumer pauses, rather than growing until the process runs out of memory.
   */
  private holdsTooMuch(st: PartitionState): boolean {
    const t = st.tracker;
    return t.inFlight >= this.heldMaxCount || t.heldBytes >= this.heldMaxBytes;
  }

  private async deliverWhenReleased(record: IssuedRecord, x: Extracted, c: BatchControl): Promise<boolean> {
    c.resolve();
    while (this.holdsTooMuch(record.st)) {
      await this.p.clock.sleep(this.o.budgetWaitMs);
      await c.beat();
      c.yielded();
      if (!c.keepGoing()) return false;
    }
    return this.deliver(record, x, c);
  }

  private async deliverAfterWait(record: IssuedRecord, x: Extracted, c: BatchControl, size: number): Promise<boolean> {
    c.resolve();
    while (!(await this.p.budget.acquire(size, this.o.budgetWaitMs))) {
      await c.beat();
      c.yielded();
      if (!c.keepGoing()) return false;
    }
    // The wait let other code run: a stop or seek meanwhile leaves this record (and the rest of the batch) unissued.
    c.yielded();
    if (!c.keepGoing()) {
      this.p.budget.release(size);
      return false;
    }
    record.size = size;
    this.issueUnderBudget(record, x);
    return true;
  }

  /** Puts the record to its partition's writer (the put decision happens now) and tracks it until durable. */
  private issueUnderBudget(r: IssuedRecord, x: Extracted): void {
    const st = r.st;
    let outcome: 'issued' | 'expired' | { error: unknown };
    try {
      outcome = st.writer.write(x.key, x.value, x.timestamp, r, x.valueBytes, x.keyBytes);
    } catch (e) {
      outcome = { error: e };
    }
    this.track(r);
    if (outcome === 'expired') {
      // Nothing was sent: an expired version says nothing about Cassandra, so it leaves a stall as it is (late records
      // arriving during an outage must not keep clearing STALLED and its stallTimeout).
      this.p.counts.expired++;
      this.m.notPut.inc();
      this.settled(r);
    } else if (outcome !== 'issued') {
      this.settlement.failed(r, outcome.error);
    }
  }

  /** Registers the record with its partition's tracker, with the writer's observed stream time after its put decision. */
  private track(r: IssuedRecord): IssuedRecord {
    r.observedStreamTime = r.st.writer.observedStreamTime();
    return r.st.tracker.add(r);
  }

  /** Counts a durable write and completes its offset. */
  private durable(r: IssuedRecord): void {
    this.p.stall.recovered();
    this.p.counts.written++;
    if (this.writtenPending++ === 0) queueMicrotask(this.reportWritten);
    this.settled(r);
  }

  /** Completes the record's offset and returns its budget. */
  private settled(r: IssuedRecord): void {
    r.st.tracker.complete(r);
    this.p.budget.release(r.size);
  }

  /** Tolerance for one failed record: true when it is settled (dead-lettered), false when it stays pending. */
  private async settleFailure(record: IssuedRecord, err: AdjunctError): Promise<boolean> {
    const disposition = await this.p.errors.handle(record, err, record.heartbeat, () => record.st.fenced);
    if (disposition === 'left-pending') {
      record.st.stuck++;
      return false;
    }
    this.p.counts.deadLettered++;
    record.st.tracker.complete(record);
    return true;
  }
}

/** A failure of one record tagged with its stage; an unexpected throw counts as a bad record. */
function asBadRecord(e: unknown, stage: 'extract' | 'write'): AdjunctError {
  return asAdjunctError(e, (message, cause) => new BadRecordError(message, { stage, cause }), stage);
}
