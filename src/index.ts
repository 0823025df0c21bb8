/**
 * adjunct's package entry, named export by export: the KIP-889 store interfaces and their memory and Cassandra
 * implementations, the lookup library, configuration loading, the worker, the error classes and the extractor contract.
 * Everything else (CQL executors, table readers, sink internals) is internal and may change without notice.
 */

// Stores: KIP-889 versioned and key-value interfaces, serdes, the in-memory reference and the Cassandra openers.
export { PUT_RETURN_CODE_VALID_TO_UNDEFINED, PUT_RETURN_CODE_NOT_PUT } from './store/types';
export type {
  VersionedKeyValueStore,
  VersionedRecord,
  HistoryOptions,
  KeyValueStore,
  KeyValue,
  Serde,
  StoreScope,
  StoreKind,
} from './store/types';
export { stringSerde, bufferSerde, jsonSerde, intKeySerde, tupleKeySerde } from './store/serde';
export { MemoryVersionedStore } from './store/memory/memory-versioned-store';
export type { MemoryVersionedStoreOptions } from './store/memory/memory-versioned-store';
export { MemoryKeyValueStore } from './store/memory/memory-kv-store';
export type { MemoryKeyValueStoreOptions } from './store/memory/memory-kv-store';
export { openCassandraVersionedStore } from './store/cassandra/open-versioned-store';
export type { CassandraVersionedStoreOptions } from './store/cassandra/open-versioned-store';
export { openCassandraKeyValueStore } from './store/cassandra/open-kv-store';
export type { CassandraKvStoreOptions } from './store/cassandra/open-kv-store';

// The lookup library: catalog-driven reads from any process.
export { openLookup, Lookup } from './lookup/lookup';
export type {
  LookupOptions,
  LookupRecord,
  LookupHistoryOptions,
  ReadOptions,
  ScanOptions,
  PageRequest,
  PageResult,
  StoreInfo,
  WriterHorizon,
  Readiness,
  PipelineReadiness,
} from './lookup/types';
export { LookupError } from './lookup/lookup-error';
export { ReadyTimeoutError } from './lookup/ready-timeout-error';

// Configuration and the worker.
export { loadConfigFile, parseConfig, ConfigValidationError } from './config/load';
export type { LoadedConfig, ConfigProblem } from './config/load';
export { configJsonSchema } from './config';
export type { AdjunctConfig, PipelineSpec } from './config';
export { Worker } from './worker/worker';
export type { WorkerStatus, WorkerState, WorkerOptions } from './worker/worker';

// Errors: one taxonomy, each code with its HTTP status, exit code and retriable flag.
export {
  AdjunctError,
  ConfigError,
  BadRecordError,
  StoreError,
  InvalidArgumentError,
  InvalidIdentifierError,
} from './errors/adjunct-error';
export { ERROR_CODES } from './errors/error-codes';
export type { ErrorCode, ErrorCodeInfo } from './errors/error-codes';
export type { ErrorStage, PipelineStage, Subsystem } from './errors/error-stage';

// Custom extractors.
export { skip } from './extract';
export type { Extractor, ExtractorFactory, SourceRecord, ExtractResult, Extracted } from './extract';
