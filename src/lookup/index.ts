/** The lookup library: read adjunct's versioned and kv stores from any process (catalog-driven serdes and generations). */
export * from './types';
export * from './lookup';
export * from './store-lookup';
export * from './readiness';
export * from './read-cache';
export * from './lookup-error';
export * from './ready-timeout-error';
export * from './key-text';
export * from './time-text';
export { isMissingSchema } from './lookup-context';
