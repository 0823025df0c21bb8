/** Converters from Kafka bytes to JS values, including Avro, JSON Schema and Protobuf through a Confluent-compatible registry. */
export * from './converter';
export * from './basic-converters';
export * from './registry-converter';
export * from './registry-errors';
export * from './factory';
export * from './schema-columns';
export * from './registry-column-source';
export * from './typed-columns-check';
