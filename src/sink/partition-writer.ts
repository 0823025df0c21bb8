import type { RowListener } from '../store/types';

/** Result of one store write as seen by the pipeline. */
export type WriteOutcome = 'written' | 'expired';

/** Writes the records of one source partition into its store (one writer identity = store + topic + partition). */
export interface PartitionWriter {
  /** Observed stream time of this writer (versioned stores), -Infinity otherwise (the store's `observedStreamTime`). */
  observedStreamTime(): number;
  /**
   * Issues the write synchronously in call order (the put decision happens now): 'expired' when the version is older
   * than the grace period (nothing is sent, the listener is not called), else 'issued', and the listener hears, never
   * synchronously, when the row is durable or failed for good. `valueBytes`: the record's value bytes when the value is
   * the record's decoded value itself (stored as they are when the store's value serde is the converter's format);
   * `keyBytes`: the record's key bytes when they are exactly the UTF-8 encoding of `key` (used by a `string` key serde).
   */
  write(
    key: unknown,
    value: unknown | null,
    timestamp: number,
    listener: RowListener,
    valueBytes?: Buffer,
    keyBytes?: Buffer,
  ): 'issued' | 'expired';
  /** Persists the observed stream time as of the offset about to be committed (the store's `flush`). */
  flush(observedStreamTime: number): Promise<void>;
  /** Releases the writer (no flush: the committer flushes explicitly). */
  close(): Promise<void>;
}

/** Opens writers for source partitions of one pipeline. */
export interface PartitionWriterFactory {
  open(topic: string, partition: number): Promise<PartitionWriter>;
}
