/**
 * A group's committed offset as kafkajs reports it, or null when there is none. kafkajs returns '-1' for "no
 * committed offset" and commits the sentinels -2 (earliest) / -1 (latest) itself when it resets an out-of-range
 * position: a negative value is never a position of ours.
 */
export function committedOffsetOf(raw: string | null | undefined): bigint | null {
  if (raw === null || raw === undefined || raw === '') return null;
  const offset = BigInt(raw);
  return offset < 0n ? null : offset;
}

/**
 * True when the group's committed offset is kafkajs's reset sentinel -2: a consumer of the group met an out-of-range
 * position and committed "earliest" over it (adjunct never commits it, and a group without a position answers -1).
 * The position it replaced, and so what was lost, is no longer known.
 */
export function isConsumerReset(raw: string | null | undefined): boolean {
  return raw === '-2';
}

/** A partition's group position found at kafkajs's reset (-2) with no position known before it: what was lost is unknown. */
export const CONSUMER_RESET = Symbol('kafkajs reset the group position');
