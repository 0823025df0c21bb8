/** The catalog tables (schema, CQL helpers, pipeline bootstrap status); generations live in ../generations. */
export * from './catalog-schema';
export * from './catalog-cql';
export * from './pipeline-status-table';
