/** Stages a record passes through in a pipeline (Kafka Connect's stage tags; the DLQ `__connect.errors.stage` header). */
export const PIPELINE_STAGES = ['consume', 'key-convert', 'value-convert', 'extract', 'write', 'dlq', 'commit'] as const;

/** Subsystems outside the record path where an error can also happen. */
export const SUBSYSTEMS = ['config', 'schema', 'store', 'catalog', 'lookup', 'bootstrap', 'worker', 'devstack'] as const;

/** A stage of the record path. */
export type PipelineStage = (typeof PIPELINE_STAGES)[number];

/** A subsystem outside the record path. */
export type Subsystem = (typeof SUBSYSTEMS)[number];

/** Where an error happened: a pipeline stage (record path) or a subsystem. */
export type ErrorStage = PipelineStage | Subsystem;

/** True for the stages of the record path (the ones a dead-letter record can carry). */
export function isPipelineStage(s: ErrorStage | undefined): s is PipelineStage {
  return s !== undefined && (PIPELINE_STAGES as readonly string[]).includes(s);
}
