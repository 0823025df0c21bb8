/** Coordination of asynchronous jobs. */
export * from './single-flight';
