import { ConfigError } from '../errors';

/** A parsed field path: object keys and array indexes. */
export type FieldPath = ReadonlyArray<string | number>;

/** Parses `payload.after.id`, `items[0].sku`, `a["odd.key"]` into segments; throws ConfigError when malformed. */
export function parseFieldPath(path: string): FieldPath {
  const out: (string | number)[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new ConfigError(`malformed field path "${path}": ${why} at position ${i}`);
  };
  if (path.length === 0) fail('empty path');
  while (i < path.length) {
    const c = path[i];
    if (c === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) fail('unclosed [');
      const inner = path.slice(i + 1, close);
      if (/^\d+$/.test(inner)) out.push(Number(inner));
      else if (/^"(?:[^"\\]|\\.)*"$/.test(inner)) out.push(JSON.parse(inner));
      else fail(`bad index [${inner}]`);
      i = close + 1;
    } else if (c === '.') {
      if (i === 0 || i === path.length - 1 || path[i + 1] === '.' || path[i + 1] === '[') fail('misplaced .');
      i++;
    } else {
      let j = i;
      while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
      if (j === i || (out.length > 0 && path[i - 1] !== '.')) fail('expected . before name');
      out.push(path.slice(i, j));
      i = j;
    }
  }
  return out;
}

/** Reads the value at a path; undefined when any segment is missing. */
export function getPath(obj: unknown, path: FieldPath): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if (cur === null || cur === undefined) return undefined;
    if (typeof seg === 'number') {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[seg];
    } else {
      if (typeof cur !== 'object' || Buffer.isBuffer(cur)) return undefined;
      cur = (cur as Record<string, unknown>)[seg];
    }
  }
  return cur;
}

/** Writes a value at a path, creating objects/arrays on the way (used by projections). */
export function setPath(target: Record<string, unknown>, path: FieldPath, value: unknown): void {
  let cur: any = target;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = path[i];
    if (cur[seg] === undefined) cur[seg] = typeof path[i + 1] === 'number' ? [] : {};
    cur = cur[seg];
  }
  cur[path[path.length - 1]] = value;
}
