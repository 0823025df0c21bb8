/** Extractors: record → { key, value, timestamp } | skip. */
export * from './extractor';
export * from './field-path';
export * from './builtin-extractor';
export * from './debezium-extractor';
export * from './filter';
export * from './loader';
export * from './depth-limit';
export * from './timestamp';
