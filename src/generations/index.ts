/** Generations of a store: naming, the catalog row, begin/switch/rollback/drop, READY, pause flags and worker heartbeats. */
export * from './names';
export * from './store-catalog';
export * from './worker-registry';
export * from './pipeline-control';
export * from './follow-plan';
export * from './generations';
export * from './table-owners';
export * from './writer-heartbeat';
export * from './generation-drop';
export * from './ready-tracker';
