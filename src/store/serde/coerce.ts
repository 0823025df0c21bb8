/** Coerces a key to what its serde accepts (numbers → strings for string keys, bigint for int64, scalars → 1-tuples); shared by writer and readers. */
export function coerceKey(serde: string, key: unknown): unknown {
  switch (serde) {
    case 'string':
      return typeof key === 'number' || typeof key === 'bigint' || typeof key === 'boolean' ? String(key) : key;
    case 'int64':
      if (typeof key === 'number' && Number.isSafeInteger(key)) return BigInt(key);
      if (typeof key === 'string' && /^-?\d+$/.test(key)) return BigInt(key);
      return key;
    case 'int':
      if (typeof key === 'string' && /^-?\d+$/.test(key)) return Number(key);
      if (typeof key === 'bigint') return Number(key);
      return key;
    case 'tuple':
      return Array.isArray(key) ? key : [key];
    default:
      return key;
  }
}

/** Coerces an extracted value to its serde (the string serde accepts numbers and booleans). */
export function coerceValue(serde: string, value: unknown): unknown {
  if (value === null) return null;
  if (serde === 'string' && (typeof value === 'number' || typeof value === 'boolean')) return String(value);
  return value;
}
