/** The catalog tables (schema, CQL helpers, pipeline bootstrap status); generations and base-table owners live in ../generations. */
export * from './catalog-schema';
export * from './catalog-cql';
export * from './pipeline-status-table';
