import { InvalidArgumentError } from '../errors';
import { parseTimeText } from '../lookup/time-text';

/** Default and maximum number of versions in one history reply. */
export const HISTORY_LIMIT = { default: 100, max: 1000 } as const;

/** Default byte cap of a history reply. */
export const DEFAULT_MAX_REPLY_BYTES = 1024 * 1024;

/** Where the next history page starts: strictly after (asc) or before (desc) this version timestamp. */
export interface HistoryCursor {
  order: 'asc' | 'desc';
  timestamp: number;
}

/** Encodes a history cursor as an opaque URL-safe token. */
function encodeHistoryCursor(c: HistoryCursor): string {
  return Buffer.from(`${c.order === 'asc' ? 'a' : 'd'}${c.timestamp}`).toString('base64url');
}

/** Decodes a history cursor; INVALID_ARGUMENT when malformed or made for the other order. */
export function decodeHistoryCursor(token: string, order: 'asc' | 'desc'): HistoryCursor {
  const m = /^([ad])(-?\d{1,16})$/.exec(Buffer.from(token, 'base64url').toString('latin1'));
  if (!m || !Number.isSafeInteger(Number(m[2])))
    throw new InvalidArgumentError('invalid history cursor: pass nextCursor from the previous page unchanged');
  const c: HistoryCursor = { order: m[1] === 'a' ? 'asc' : 'desc', timestamp: Number(m[2]) };
  if (c.order !== order) throw new InvalidArgumentError(`this cursor pages a history in ${c.order} order; repeat order=${c.order}`);
  return c;
}

/** The [from, to] time range to read for a page: a desc cursor lowers `to`, an asc cursor raises `from`. */
export function pageRange(
  from: number | undefined,
  to: number | undefined,
  cursor: HistoryCursor | undefined,
): { from?: number; to?: number } {
  if (!cursor) return { from, to };
  if (cursor.order === 'desc') return { from, to: Math.min(to ?? Number.MAX_SAFE_INTEGER, cursor.timestamp - 1) };
  return { from: Math.max(from ?? 0, cursor.timestamp + 1), to };
}

/**
 * Cuts one page out of history versions (in the requested order): drops versions the cursor already returned, stops at
 * `limit` versions or before `maxBytes` of JSON (always at least one version), and says where the next page starts.
 */
export function cutHistoryPage<T extends { timestamp?: number }>(
  versions: T[],
  json: (v: T) => unknown,
  o: { limit: number; maxBytes: number; order: 'asc' | 'desc'; cursor?: HistoryCursor },
): { items: unknown[]; next?: string } {
  const fresh = o.cursor
    ? versions.filter((v) => (o.order === 'asc' ? (v.timestamp ?? 0) > o.cursor!.timestamp : (v.timestamp ?? 0) < o.cursor!.timestamp))
    : versions;
  const items: unknown[] = [];
  let bytes = 0;
  let taken = 0;
  for (const v of fresh) {
    if (taken >= o.limit) break;
    const j = json(v);
    const size = Buffer.byteLength(JSON.stringify(j)) + 1;
    if (taken > 0 && bytes + size > o.maxBytes) break;
    items.push(j);
    bytes += size;
    taken++;
  }
  if (taken === fresh.length) return { items };
  return { items, next: encodeHistoryCursor({ order: o.order, timestamp: fresh[taken - 1].timestamp ?? 0 }) };
}

/** Parses a time query parameter (see parseTimeText); undefined when absent. */
export function parseTimeParam(name: string, v: string | undefined): number | undefined {
  return v === undefined ? undefined : parseTimeText(name, v);
}

/** A time for messages: ISO-8601 when a Date can show it, else the epoch milliseconds. */
export function describeTime(ms: number): string {
  return Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`;
}
