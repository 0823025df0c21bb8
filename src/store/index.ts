/** Public API of adjunct's stores: types, serdes, memory and Cassandra implementations. */
export * from './types';
export * from './validation';
export * from './key-range';
export * from './serde';
export * from './memory/memory-versioned-store';
export * from './memory/memory-kv-store';
export * from './cassandra';
