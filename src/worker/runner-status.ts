import type { PipelineSpec } from '../config/schema';
import { LiveWriter, ReadyTracker } from '../generations';
import { BootstrapProgress } from '../bootstrap';
import { PartitionStatus, PipelineState, PipelineStatus, PipelineTask } from '../sink/pipeline-task';
import type { BuildingGeneration } from './generation-build';

/** A partition's status plus its retention horizon (streamTime − historyRetention; null without stream time or for kv stores). */
export type RunnerPartitionStatus = PartitionStatus & { horizon: number | null };

/** Status of a pipeline including its generations, bootstrap and each partition's retention horizon. */
export interface RunnerStatus extends Omit<PipelineStatus, 'partitions'> {
  partitions: RunnerPartitionStatus[];
  store: string;
  generation: number;
  building?: { generation: number; progress: BootstrapProgress | null; task: PipelineStatus };
  bootstrap?: BootstrapProgress;
  /** Persisted pause flag as this worker last applied it. */
  paused: boolean;
  /** Every live worker of this pipeline and the generation it writes (as of this worker's last catalog poll). */
  writers: LiveWriter[];
  /** Source topics deleted under the pipeline (as of the last topic refresh). */
  missingTopics: string[];
}

/** What a runner holds when its status is taken. */
export interface RunnerSnapshot {
  spec: PipelineSpec;
  store: string;
  generation: number;
  main?: PipelineTask;
  mainTracker?: ReadyTracker;
  build?: BuildingGeneration;
  paused: boolean;
  writers: LiveWriter[];
  missingTopics: string[];
}

/** The status of a runner: its main task's, with each partition's horizon, plus generations, bootstrap and the build. */
export function runnerStatus(s: RunnerSnapshot): RunnerStatus {
  const main = s.main?.status() ?? {
    name: s.spec.name,
    state: 'CREATED' as PipelineState,
    partitions: [],
    counts: { consumed: 0, written: 0, skipped: 0, deadLettered: 0, expired: 0, lostOffsets: 0 },
  };
  const retention = s.spec.store.kind === 'versioned' ? s.spec.store.historyRetention : null;
  return {
    ...main,
    partitions: main.partitions.map((p) => ({
      ...p,
      horizon: p.observedStreamTime === null || retention === null ? null : p.observedStreamTime - retention,
    })),
    store: s.store,
    generation: s.generation,
    paused: s.paused,
    writers: s.writers,
    missingTopics: s.missingTopics,
    bootstrap: s.mainTracker?.snapshot(),
    building: s.build ? { generation: s.build.generation, progress: s.build.tracker.snapshot(), task: s.build.task.status() } : undefined,
  };
}
