/** Injected time. */
export * from './clock';
export * from './manual-clock';
