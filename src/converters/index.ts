/** Converters from Kafka bytes to JS values, including Avro through a Confluent-compatible registry. */
export * from './converter';
export * from './basic-converters';
export * from './avro-converter';
export * from './factory';
