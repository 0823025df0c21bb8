/** Offsets: committed positions, the one offset-out-of-range policy and the start-up check. */
export * from './committed-offset';
export * from './offset-loss-policy';
export * from './group-positions';
export * from './start-positions';
