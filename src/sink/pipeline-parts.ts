import { Admin, Kafka } from 'kafkajs';
import { Clock } from '../clock';
import { PipelineStage } from '../errors';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { FailedRecord } from './dlq-reporter';
import { PartitionWriterFactory } from './partition-writer';
import { RecordProcessor } from './record-processor';
import { StallMonitor } from './stall-monitor';
import { CompiledSinkTaskOptions } from './task-options';
import { WriteBudget } from './write-budget';

/** Where dead letters are sent (DeadLetterQueueReporter). */
export interface DeadLetterSink {
  /** Resolves once the dead letter is durable; rejects with an AdjunctError (retriable when a retry may help). */
  report(record: FailedRecord, error: unknown, stage: PipelineStage): Promise<void>;
}

/** The Kafka admin calls a task makes: committed offsets at assignment, log start offsets when a batch jumps. */
export type TaskAdmin = Pick<Admin, 'fetchOffsets' | 'fetchTopicOffsets'>;

/** What every task of one pipeline shares, built once by the worker (settings compiled once, never copied). */
export interface PipelineParts {
  options: CompiledSinkTaskOptions;
  kafka: Kafka;
  admin: TaskAdmin;
  processor: RecordProcessor;
  dlq?: DeadLetterSink;
  /** Worker-wide bound of in-flight writes (count and bytes). */
  budget: WriteBudget;
  /** Infrastructure failures of this pipeline (STALLED, stallTimeout). */
  stall: StallMonitor;
  clock: Clock;
  metrics: AdjunctMetrics;
  logger: Logger;
}

/** One generation's task: its consumer group, its table's writers, and what to call on failure or lost offsets. */
export interface TaskTarget {
  generation: number;
  /** The topics this task subscribes to (the pipeline's list, or the current matches of its topicPattern). */
  topics: string[];
  groupId: string;
  writers: PartitionWriterFactory;
  /** The task failed (tolerance none, offsets lost with policy fail, stall timeout). */
  onFatal: (e: import('../errors').AdjunctError) => void;
  /** Offsets fell off the log with policy reload: start a new generation. */
  reload: () => void;
  /** Positions decided before the task starts (policy latest at start: the log start), by topic-partition key. */
  startAt?: ReadonlyMap<string, bigint>;
  /** The progress watchdog found the task's consumer stuck: restart the task from its committed offsets. */
  onStuck?: () => void;
}
