import type { PutRows } from './edge-put';
import { KnownTimes } from './version-edges';

/**
 * What a writer knows of one key: its newest version times (unknown: the next put reads), the puts of it not durable
 * yet, and the puts waiting for them and for a read (a read never runs while the key has writes in flight, so it sees
 * every one of them).
 */
export interface KeyState extends KnownTimes {
  /** The key's bytes (a copy: never a slice of a fetched batch). */
  key: Buffer;
  known: boolean;
  pending: number;
  /** True while a read for the first waiting put is in flight. */
  reading: boolean;
  waiting: PutRows[] | null;
  /** Written since the eviction clock last passed it (a second chance). */
  used: boolean;
}

/** Byte equality in JS: a key is a few bytes, where Buffer.equals pays for a call into C++. */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A key's state when it is first met: nothing known, with its own copy of the key's bytes. */
export function newState(key: Buffer): KeyState {
  // A copy with its own memory: neither a slice of a fetched batch nor of Node's shared buffer pool.
  const own = Buffer.allocUnsafeSlow(key.length);
  key.copy(own);
  return {
    key: own,
    known: false,
    times: [],
    complete: false,
    pending: 0,
    reading: false,
    waiting: null,
    used: true,
  };
}

/**
 * Forgets keys until at most `max` are kept, in the map's order: a key with writes in flight, puts waiting or a read is
 * kept, and one written since the last pass gets a second chance (moved to the end, unmarked). At most two passes.
 */
export function forgetIdle<K>(map: Map<K, KeyState>, max: number): void {
  let budget = 2 * map.size;
  for (const [id, s] of map) {
    if (map.size <= max || budget-- <= 0) return;
    if (s.pending > 0 || s.waiting !== null || s.reading) continue;
    map.delete(id);
    if (s.used) {
      s.used = false;
      map.set(id, s);
    }
  }
}
