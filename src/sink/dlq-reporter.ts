import { Admin, IHeaders, Producer } from 'kafkajs';
import { AdjunctError, describeError, PipelineStage, scrubErrorText } from '../errors';
import { isRetriableKafkaError } from '../kafka/kafka-retry';
import { SinkRecord } from './sink-record';

/** The original bytes and coordinates of a failed record. */
export type FailedRecord = SinkRecord;

/** Where dead letters go, and how the topic is created when it is missing (Kafka Connect's errors.deadletterqueue.*). */
export interface DeadLetterTopic {
  topic: string;
  partitions: number;
  /** -1: the broker's default.replication.factor. */
  replicationFactor: number;
}

/** Sends failed records to a dead-letter topic with Kafka Connect's `__connect.errors.*` context headers. */
export class DeadLetterQueueReporter {
  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
    private readonly pipeline: string,
    private readonly contextHeaders = true,
  ) {}

  /** Produces the record (acks=all) and resolves once the DLQ write is durable; failures are DLQ_FAILED, retriable as Kafka says. */
  async report(record: FailedRecord, error: unknown, stage: PipelineStage): Promise<void> {
    const headers: IHeaders = { ...(record.headers ?? {}) };
    if (this.contextHeaders) {
      // As Kafka Connect's reporter: a header the record already carries (a dead letter replayed and failing again)
      // keeps its first value, so the context names the first failure.
      for (const [name, value] of Object.entries(contextHeadersFor(record, error, stage, this.pipeline)))
        if (!Object.hasOwn(headers, name)) headers[name] = value;
    }
    try {
      await this.producer.send({
        topic: this.topic,
        acks: -1,
        messages: [{ key: record.key, value: record.value, headers, timestamp: record.timestamp }],
      });
    } catch (e) {
      // kafkajs's own retries give up on a broker outage longer than the producer's retry time: that failure is not
      // retriable itself, but what it wraps (a refused connection, a leader moving) is, and so is the dead letter.
      const retriable = isRetriableKafkaError(e);
      throw new AdjunctError(`sending to dead-letter topic ${this.topic}: ${describeError(e)}`, {
        code: 'DLQ_FAILED',
        stage: 'dlq',
        retriable,
        cause: e,
      });
    }
  }
}

/** Creates the DLQ topic when it is missing, then checks that it exists; a clear DLQ_UNAVAILABLE naming the topic otherwise. */
export async function ensureDeadLetterTopic(admin: Admin, t: DeadLetterTopic): Promise<void> {
  try {
    const existing = await admin.listTopics();
    if (!existing.includes(t.topic)) {
      await admin.createTopics({
        topics: [{ topic: t.topic, numPartitions: t.partitions, replicationFactor: t.replicationFactor }],
        waitForLeaders: true,
      });
    }
    await admin.fetchTopicMetadata({ topics: [t.topic] });
  } catch (e) {
    if ((e as { type?: unknown }).type === 'TOPIC_ALREADY_EXISTS') return;
    throw new AdjunctError(
      `dead-letter topic ${t.topic} is missing and could not be created (partitions ${t.partitions}, replication factor ${t.replicationFactor}): ${describeError(e)}`,
      { code: 'DLQ_UNAVAILABLE', stage: 'dlq', cause: e, context: { topic: t.topic } },
    );
  }
}

/** Kafka Connect's name (its `Stage` enum) for each record-path stage: the value of the `__connect.errors.stage` header. */
export const CONNECT_STAGE_NAMES: Readonly<Record<PipelineStage, string>> = {
  consume: 'KAFKA_CONSUME',
  'key-convert': 'KEY_CONVERTER',
  'value-convert': 'VALUE_CONVERTER',
  extract: 'TRANSFORMATION',
  write: 'TASK_PUT',
  dlq: 'KAFKA_PRODUCE',
  commit: 'TASK_PUT',
};

/** Builds Kafka Connect's error context headers for a failed record. */
export function contextHeadersFor(record: FailedRecord, error: unknown, stage: PipelineStage, pipeline: string): Record<string, string> {
  const err = error instanceof Error ? error : new Error(String(error));
  const cause = (err as { cause?: unknown }).cause;
  const h: Record<string, string> = {
    '__connect.errors.topic': record.topic,
    '__connect.errors.partition': String(record.partition),
    '__connect.errors.offset': record.offset,
    '__connect.errors.connector.name': pipeline,
    '__connect.errors.task.id': `${record.topic}-${record.partition}`,
    '__connect.errors.stage': CONNECT_STAGE_NAMES[stage],
    '__connect.errors.class.name': err instanceof AdjunctError ? err.code : err.name,
    '__connect.errors.exception.class.name': err.constructor?.name ?? 'Error',
    // Messages without stack frames, source paths or addresses (scrubErrorText); the full error is in the worker log.
    '__connect.errors.exception.message': scrubErrorText(err.message),
    '__connect.errors.exception.stacktrace': `${err instanceof AdjunctError ? err.code : err.name}: ${scrubErrorText(err.message)}`,
  };
  if (cause instanceof Error) {
    h['__connect.errors.cause.class.name'] = cause.constructor?.name ?? 'Error';
    h['__connect.errors.cause.message'] = scrubErrorText(cause.message);
  }
  return h;
}
