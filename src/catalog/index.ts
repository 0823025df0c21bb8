/** The catalog: store generations and pipeline bootstrap status, persisted in Cassandra. */
export * from './catalog-schema';
export * from './catalog-cql';
export * from './store-catalog';
export * from './pipeline-status-table';
