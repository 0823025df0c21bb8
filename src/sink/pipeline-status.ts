/** Lifecycle states of a pipeline. */
export type PipelineState = 'CREATED' | 'RUNNING' | 'PAUSED' | 'STOPPING' | 'STOPPED' | 'FAILED';

/** Per-partition status snapshot. */
export interface PartitionStatus {
  topic: string;
  partition: number;
  committedOffset: string | null;
  /** Log end offset (high watermark) seen in the last fetch. */
  endOffset: string | null;
  /** endOffset − committedOffset. */
  lag: number | null;
  inFlight: number;
  streamTime: number | null;
}

/** Status snapshot of a pipeline. */
export interface PipelineStatus {
  name: string;
  state: PipelineState;
  partitions: PartitionStatus[];
  lastError?: string;
  counts: { consumed: number; written: number; skipped: number; deadLettered: number; expired: number };
}
