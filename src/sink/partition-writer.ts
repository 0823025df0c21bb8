/** Result of one store write as seen by the pipeline. */
export type WriteOutcome = 'written' | 'expired';

/** An issued write: the writer's observed stream time right after the put decision, and the promise of durability. */
export interface IssuedWrite {
  observedStreamTime: number;
  done: Promise<WriteOutcome>;
}

/** Writes the records of one source partition into its store (one writer identity = store + topic + partition). */
export interface PartitionWriter {
  /** Observed stream time of this writer (versioned stores), -Infinity otherwise (the store's `observedStreamTime`). */
  observedStreamTime(): number;
  /** Issues the write synchronously in call order (the put decision happens now); durability is the promise. */
  write(key: unknown, value: unknown | null, timestamp: number): IssuedWrite;
  /** Persists the observed stream time as of the offset about to be committed (the store's `flush`). */
  flush(observedStreamTime: number): Promise<void>;
  /** Releases the writer (no flush: the committer flushes explicitly). */
  close(): Promise<void>;
}

/** Opens writers for source partitions of one pipeline. */
export interface PartitionWriterFactory {
  open(topic: string, partition: number): Promise<PartitionWriter>;
}
