/** Configuration: schema, loading with env interpolation, validation with YAML paths and lines. */
export * from './schema';
export * from './json-schema';
export * from './load';
export * from './duration';
export * from './interpolate';
export { configWarnings } from './run-checks';
