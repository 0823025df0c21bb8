import { Admin } from 'kafkajs';
import type { PipelineSpec } from '../config/schema';
import { PipelineStatusTable } from '../catalog';
import { AdjunctError } from '../errors';
import { Generations, StoreEntry } from '../generations';
import { PartitionWriterFactory } from '../sink/partition-writer';

/** What a runner needs besides the parts its tasks share: the catalog side of generations and bootstrap. */
export interface PipelineRunnerDeps {
  spec: PipelineSpec;
  admin: Admin;
  baseGroupId: string;
  generations: Generations;
  /** How often the runner re-reads the catalog to follow reloads, switches, rollbacks and pauses started anywhere. */
  generationPollMs: number;
  status: PipelineStatusTable;
  entry: StoreEntry;
  /** Writers into a given table generation; they never create its table (a missing one is TABLE_MISSING). */
  writersFor: (generation: number) => PartitionWriterFactory;
  /** Creates the table of a generation (a build that has committed nothing yet: `ReadyTracker.noProgressYet`). */
  ensureTable: (generation: number) => Promise<void>;
  /** True when the table of a generation exists (after schema agreement). */
  tableExists: (generation: number) => Promise<boolean>;
  /** The current generation's table was gone at start (dropped outside adjunct; not re-created). */
  currentTableLost: boolean;
  /** Drops the table of a generation. */
  dropGeneration: (generation: number) => Promise<void>;
  workerId: string;
  progressBar: boolean;
  onFatal: (e: AdjunctError) => void;
  /** True once the worker is stopping or gives its start up: the start's Kafka retries end after their failed attempt. */
  stopping: () => boolean;
}
