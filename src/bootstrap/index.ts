/** Kafka-side helpers: partition offsets, out-of-range detection, bootstrap tracking. */
export * from './topic-offsets';
export * from './bootstrap-tracker';
