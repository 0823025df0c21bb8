/** Parses a duration such as `500`, `250ms`, `30s`, `5m`, `2h`, `7d` into milliseconds; returns null if malformed. */
export function parseDurationMs(input: string | number): number | null {
  if (typeof input === 'number') return Number.isSafeInteger(input) && input >= 0 ? input : null;
  const m = /^\s*(\d+)\s*(ms|s|m|h|d|w)?\s*$/.exec(input);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = m[2] ?? 'ms';
  const factor: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
  const v = n * factor[unit];
  return Number.isSafeInteger(v) ? v : null;
}
