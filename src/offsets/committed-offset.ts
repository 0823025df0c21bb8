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
