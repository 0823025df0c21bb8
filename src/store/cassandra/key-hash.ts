/** Hashes of a version row's identity, computed once per write and shared by the batcher and the retention cleaner. */

/** FNV-1a (32-bit) of a key's bytes, without allocating. */
export function keyHash(key: Buffer): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i], 0x01000193);
  return h | 0;
}

/** murmur3's 32-bit finaliser: spreads every input bit over the output. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** The rowId of a version row (see CoalescedWrite.rowId): its key's keyHash mixed with its timestamp (both 32-bit halves). */
export function versionRowId(hash: number, timestamp: number): number {
  const high = Math.floor(timestamp / 0x100000000);
  return fmix32(fmix32(hash ^ (timestamp - high * 0x100000000)) ^ high);
}
