/** The catalog: store generations, pipeline bootstrap status and base-table owners, persisted in Cassandra. */
export * from './catalog-schema';
export * from './catalog-cql';
export * from './store-catalog';
export * from './pipeline-status-table';
export * from './table-owners';
