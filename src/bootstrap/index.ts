/** Kafka-side bootstrap: partition offsets, out-of-range detection, the captured end offsets and progress toward them. */
export * from './topic-offsets';
export * from './bootstrap-progress';
export * from './progress-reporter';
