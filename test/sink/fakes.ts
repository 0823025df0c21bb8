/** Fakes of adjunct's own sink interfaces (writer, DLQ sink, admin look-ups, converter, extractor) for loop tests. */
import { KafkaMessage } from 'kafkajs';
import { ManualClock } from '../../src/clock';
import { AdjunctError, BadRecordError, PipelineStage } from '../../src/errors';
import { Extracted, Extractor, skip } from '../../src/extract';
import { Converter } from '../../src/converters';
import { createLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';
import { FailedRecord } from '../../src/sink/dlq-reporter';
import { OffsetCommit } from '../../src/sink/offset-committer';
import { PartitionWriter, WriteOutcome } from '../../src/sink/partition-writer';
import { RowListener } from '../../src/store/types';
import { DeadLetterSink, PipelineParts, TaskTarget } from '../../src/sink/pipeline-parts';
import { RecordProcessor } from '../../src/sink/record-processor';
import { SinkTaskCore } from '../../src/sink/sink-task-core';
import { FetchedBatch } from '../../src/sink/batch-control';
import { StallMonitor } from '../../src/sink/stall-monitor';
import { compileSinkTaskOptions, SinkTaskOptions } from '../../src/sink/task-options';
import { WriteBudget } from '../../src/sink/write-budget';

/** A write the test settles by hand. */
export interface PendingWrite {
  key: unknown;
  value: unknown;
  timestamp: number;
  resolve(o: WriteOutcome): void;
  reject(e: unknown): void;
}

/** A partition writer whose writes succeed at once unless `hold` is set or `failWith` names a key. */
export class FakeWriter implements PartitionWriter {
  stream = Number.NEGATIVE_INFINITY;
  hold = false;
  readonly pending: PendingWrite[] = [];
  readonly written: { key: unknown; value: unknown; timestamp: number }[] = [];
  readonly flushed: number[] = [];
  failWith = new Map<string, () => unknown>();
  /** Keys whose writes the writer treats as older than the grace period (nothing sent). */
  expire = new Set<string>();

  observedStreamTime(): number {
    return this.stream;
  }

  write(key: unknown, value: unknown, timestamp: number, listener: RowListener): 'issued' | 'expired' {
    if (this.expire.has(String(key))) return 'expired';
    this.stream = Math.max(this.stream, timestamp);
    const fail = this.failWith.get(String(key));
    if (fail) {
      const e = fail();
      void Promise.resolve().then(() => listener.rowFailed(e));
      return 'issued';
    }
    if (!this.hold) {
      this.written.push({ key, value, timestamp });
      void Promise.resolve().then(() => listener.rowWritten());
      return 'issued';
    }
    const p: PendingWrite = {
      key,
      value,
      timestamp,
      resolve: () => (this.written.push({ key, value, timestamp }), listener.rowWritten()),
      reject: (e) => listener.rowFailed(e),
    };
    this.pending.push(p);
    return 'issued';
  }

  async flush(observedStreamTime: number): Promise<void> {
    this.flushed.push(observedStreamTime);
  }

  async close(): Promise<void> {}
}

/** A DLQ sink recording dead letters; `failures` are thrown first, one per attempt. */
export class FakeDlq implements DeadLetterSink {
  readonly letters: { record: FailedRecord; stage: PipelineStage; error: unknown }[] = [];
  failures: AdjunctError[] = [];
  attempts = 0;

  async report(record: FailedRecord, error: unknown, stage: PipelineStage): Promise<void> {
    this.attempts++;
    const f = this.failures.shift();
    if (f) throw f;
    this.letters.push({ record, stage, error });
  }
}

/** UTF-8 strings; `failures` (e.g. registry down) are thrown first, one per call. */
export class FakeConverter implements Converter {
  readonly name = 'fake';
  failures: AdjunctError[] = [];
  async decode(bytes: Buffer | null): Promise<unknown> {
    const f = this.failures.shift();
    if (f) throw f;
    return bytes === null ? null : bytes.toString('utf8');
  }
}

/** key = record key; value = JSON of the value (`skip` skips); timestamp = record timestamp. */
export const jsonExtractor: Extractor = {
  extract(r): Extracted | ReturnType<typeof skip> {
    if (r.value === 'skip') return skip('filtered');
    let value: unknown = null;
    try {
      value = r.value === null ? null : JSON.parse(String(r.value));
    } catch (e) {
      throw new BadRecordError(`invalid JSON at ${r.offset}`, { stage: 'value-convert', code: 'DECODE_FAILED', cause: e });
    }
    return { key: r.key, value, timestamp: r.timestamp };
  },
};

/** Kafka messages k<offset> → value, at consecutive offsets from `first`. */
export function messages(values: (string | null)[], first = 0): KafkaMessage[] {
  return values.map(
    (v, i) =>
      ({
        offset: String(first + i),
        key: Buffer.from(`k${first + i}`),
        value: v === null ? null : Buffer.from(v),
        timestamp: String(1000 + first + i),
        attributes: 0,
        headers: {},
      }) as KafkaMessage,
  );
}

/** A fetched batch of one partition with counters of resolved offsets and heartbeats. */
export function batchOf(
  msgs: KafkaMessage[],
  o: {
    topic?: string;
    partition?: number;
    running?: () => boolean;
    stale?: () => boolean;
    /** Offsets kafkajs fetched around the messages (transaction markers, aborted records): first and last. */
    fetched?: { first: string; last: string };
  } = {},
) {
  const resolved: string[] = [];
  const control = { heartbeats: 0, resolved };
  const b: FetchedBatch = {
    batch: {
      topic: o.topic ?? 't',
      partition: o.partition ?? 0,
      highWatermark: String(Number(o.fetched?.last ?? msgs.at(-1)?.offset ?? -1) + 1),
      messages: msgs,
      ...(o.fetched && { firstOffset: () => o.fetched!.first, lastOffset: () => o.fetched!.last }),
    },
    resolveOffset: (off) => resolved.push(off),
    heartbeat: async () => void control.heartbeats++,
    isRunning: o.running ?? (() => true),
    isStale: o.stale ?? (() => false),
  };
  return { b, control };
}

/** A sink task core wired to fakes; everything observable. */
export function fakeTask(
  options: Partial<SinkTaskOptions> = {},
  admin: { committed?: bigint | null; logStart?: bigint; high?: bigint } = {},
  budget = { count: 64, bytes: 16 << 20 },
) {
  const clock = new ManualClock();
  const writer = new FakeWriter();
  const dlq = new FakeDlq();
  const valueConverter = new FakeConverter();
  const commits: OffsetCommit[] = [];
  const fatal: AdjunctError[] = [];
  let reloads = 0;
  /** Failures the writer factory throws first, one per open attempt. */
  const openFailures: unknown[] = [];
  const o = compileSinkTaskOptions({
    pipeline: 'p',
    heartbeatIntervalMs: 20,
    retryMaxDelayMs: 1_000,
    retryTimeoutMs: 5_000,
    ...options,
    deadLetterQueue: options.tolerance === 'all',
  });
  const stall = new StallMonitor({ pipeline: 'p', retryTimeoutMs: o.retryTimeoutMs, stallTimeoutMs: o.stallTimeoutMs }, clock);
  const fakeAdmin = {
    fetchOffsets: async () => [
      {
        topic: 't',
        partitions: [
          {
            partition: 0,
            offset: admin.committed === undefined || admin.committed === null ? '-1' : String(admin.committed),
            metadata: null,
          },
        ],
      },
    ],
    fetchTopicOffsets: async () => [
      { partition: 0, offset: '0', low: String(admin.logStart ?? 0n), high: String(admin.high ?? 1_000_000n) },
    ],
  } as unknown as PipelineParts['admin'];
  const parts: PipelineParts = {
    options: o,
    kafka: undefined as never,
    admin: fakeAdmin,
    processor: new RecordProcessor(new FakeConverter(), valueConverter, jsonExtractor),
    dlq: o.tolerance === 'all' ? dlq : undefined,
    budget: new WriteBudget(budget.count, budget.bytes),
    stall,
    clock,
    metrics: new AdjunctMetrics({ defaultMetrics: false }),
    logger: createLogger('silent'),
  };
  const target: TaskTarget = {
    generation: 1,
    topics: ['t'],
    groupId: 'g',
    writers: {
      open: async () => {
        if (openFailures.length) throw openFailures.shift();
        return writer;
      },
    },
    onFatal: (e) => fatal.push(e),
    reload: () => void reloads++,
  };
  const core = new SinkTaskCore(parts, target, async (offsets) => void commits.push(offsets));
  const committedOffset = () => commits.at(-1)?.[0]?.offset;
  return { core, clock, writer, dlq, valueConverter, commits, fatal, parts, committedOffset, openFailures, reloads: () => reloads };
}

/** Lets settled promise callbacks run. */
export const settle = () => new Promise<void>((r) => setImmediate(r));
