/** Result of one store write as seen by the pipeline. */
export type WriteOutcome = 'written' | 'expired';

/** An issued write: the writer's stream time right after the put decision, and the promise of durability. */
export interface IssuedWrite {
  streamTimeAfter: number;
  done: Promise<WriteOutcome>;
}

/** Writes the records of one source partition into its store (one writer identity = store + topic + partition). */
export interface PartitionWriter {
  /** Current stream time of this writer (versioned stores), -Infinity otherwise. */
  streamTime(): number;
  /** Issues the write synchronously in call order (the put decision happens now); durability is the promise. */
  write(key: unknown, value: unknown | null, timestamp: number): IssuedWrite;
  /** Persists the stream time as of the offset about to be committed. */
  checkpoint(streamTime: number): Promise<void>;
  /** Releases the writer (no flush: checkpoints are explicit). */
  close(): Promise<void>;
}

/** Opens writers for source partitions of one pipeline. */
export interface PartitionWriterFactory {
  open(topic: string, partition: number): Promise<PartitionWriter>;
}
