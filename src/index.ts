/** adjunct's package entry: stores (KIP-889 versioned and kv), the lookup library, configuration, the worker and errors. */
export * from './store';
export * from './lookup';
export * from './errors';
export { loadConfigFile, parseConfig, configJsonSchema, ConfigValidationError } from './config';
export type { AdjunctConfig, PipelineSpec } from './config';
export { Worker } from './worker/worker';
export type { WorkerStatus, WorkerState, WorkerOptions } from './worker/worker';
export type { Extractor, ExtractorFactory, SourceRecord, ExtractResult, Extracted } from './extract';
export { skip } from './extract';
