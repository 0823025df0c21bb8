/** Cassandra-backed stores, their schema helpers and read-only table readers. */
export * from './cql-executor';
export * from './identifiers';
export * from './table-options';
export * from './layout';
export * from './schema';
export * from './paging';
export * from './stream-time-table';
export * from './versioned-table-reader';
export * from './retention-cleaner';
export * from './cassandra-versioned-store';
export * from './open-versioned-store';
export { type TableReaderOptions, validatePartition } from './open-common';
export * from './kv-table-reader';
export * from './cassandra-kv-store';
export * from './open-kv-store';
export * from './cql-types';
export * from './typed-column-spec';
export * from './typed-columns';
