import { IHeaders, Producer } from 'kafkajs';
import { AdjunctError, ErrorStage } from '../errors';

/** The original bytes and coordinates of a failed record. */
export interface FailedRecord {
  topic: string;
  partition: number;
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: IHeaders;
}

/** Sends failed records to a dead-letter topic with Kafka Connect's `__connect.errors.*` context headers. */
export class DeadLetterQueueReporter {
  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
    private readonly pipeline: string,
    private readonly contextHeaders = true,
  ) {}

  /** Produces the record (acks=all) and resolves once the DLQ write is durable. */
  async report(record: FailedRecord, error: unknown, stage: ErrorStage): Promise<void> {
    const headers: IHeaders = { ...(record.headers ?? {}) };
    if (this.contextHeaders) Object.assign(headers, contextHeadersFor(record, error, stage, this.pipeline));
    await this.producer.send({
      topic: this.topic,
      acks: -1,
      messages: [{ key: record.key, value: record.value, headers, timestamp: record.timestamp }],
    });
  }
}

/** Builds Kafka Connect's error context headers for a failed record. */
export function contextHeadersFor(record: FailedRecord, error: unknown, stage: ErrorStage, pipeline: string): Record<string, string> {
  const err = error instanceof Error ? error : new Error(String(error));
  const cause = (err as { cause?: unknown }).cause;
  const h: Record<string, string> = {
    '__connect.errors.topic': record.topic,
    '__connect.errors.partition': String(record.partition),
    '__connect.errors.offset': record.offset,
    '__connect.errors.connector.name': pipeline,
    '__connect.errors.task.id': `${record.topic}-${record.partition}`,
    '__connect.errors.stage': stage,
    '__connect.errors.class.name': err instanceof AdjunctError ? err.code : err.name,
    '__connect.errors.exception.class.name': err.constructor?.name ?? 'Error',
    '__connect.errors.exception.message': truncate(err.message, 4000),
    '__connect.errors.exception.stacktrace': truncate(err.stack ?? '', 8000),
  };
  if (cause instanceof Error) {
    h['__connect.errors.cause.class.name'] = cause.constructor?.name ?? 'Error';
    h['__connect.errors.cause.message'] = truncate(cause.message, 4000);
  }
  return h;
}

function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n) + '…' : s;
}
