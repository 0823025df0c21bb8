import { IHeaders, KafkaMessage } from 'kafkajs';

/** One consumed record with its coordinates and original bytes (what a dead letter carries). */
export interface SinkRecord {
  topic: string;
  partition: number;
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: IHeaders;
}

/** The SinkRecord of a fetched message. */
export function sinkRecordOf(topic: string, partition: number, m: KafkaMessage): SinkRecord {
  return { topic, partition, offset: m.offset, timestamp: m.timestamp, key: m.key ?? null, value: m.value ?? null, headers: m.headers };
}

/** `topic/partition@offset`, how errors and logs name a record. */
export function recordLocation(r: Pick<SinkRecord, 'topic' | 'partition' | 'offset'>): string {
  return `${r.topic}/${r.partition}@${r.offset}`;
}

/** Bytes a record holds while its write is in flight (key + value). */
export function recordSize(r: SinkRecord): number {
  return (r.key?.length ?? 0) + (r.value?.length ?? 0);
}
