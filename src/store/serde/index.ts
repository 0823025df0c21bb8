/** Serdes: value encodings and order-preserving key encodings. */
export * from './basic-serdes';
export * from './int-key-serdes';
export * from './tuple-key-serde';
export * from './registry';
export * from './serde-error';
export * from './coerce';
