/**
 * Lifecycle states of a pipeline task, as shown in /status, /readyz and the `adjunct_pipeline_state` metric:
 * - CREATED: built, not started.
 * - RUNNING: consuming and writing.
 * - PAUSED: fetching paused by the admin route; in-flight writes still complete.
 * - STALLED: a dependency (Cassandra, the registry, the DLQ) has failed for longer than errors.retryTimeout; the task
 *   keeps retrying with backoff, commits nothing past the failing record, and returns to RUNNING by itself.
 * - STOPPING: draining in-flight writes before the final commit.
 * - STOPPED: left the group after a clean stop.
 * - FAILED: stopped on a fatal error (tolerance none, offsets lost with policy fail, errors.stallTimeout); offsets
 *   stay at the last durable record.
 */
export type PipelineState = 'CREATED' | 'RUNNING' | 'PAUSED' | 'STALLED' | 'STOPPING' | 'STOPPED' | 'FAILED';

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
  /** The writer's observed stream time (versioned stores), null before the first record. */
  observedStreamTime: number | null;
}

/** Record counts of a pipeline task since it started. */
export interface TaskCounts {
  consumed: number;
  written: number;
  skipped: number;
  deadLettered: number;
  expired: number;
  /** Offsets lost because retention deleted them before the task read them (policy latest or reload). */
  lostOffsets: number;
}

/** Status snapshot of a pipeline. */
export interface PipelineStatus {
  name: string;
  state: PipelineState;
  partitions: PartitionStatus[];
  lastError?: string;
  /** Why the task is STALLED (the last infrastructure failure), while it is. */
  stalledBy?: string;
  counts: TaskCounts;
  /** The task's Kafka consumer: fetch requests completed, the last one's time (ISO), batches in progress (absent without a watchdog). */
  consumer?: { fetches: number; lastFetchAt: string | null; batchesInProgress: number };
}
