import { ConfigError } from '../errors';

/** A parsed field path: object keys and array indexes. */
export type FieldPath = ReadonlyArray<string | number>;

/** Segments a field path may never name: they reach an object's prototype instead of its data. */
export const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

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
      if (FORBIDDEN_SEGMENTS.has(String(out[out.length - 1])))
        fail(`segment "${String(out[out.length - 1])}" is not allowed (it would reach a prototype)`);
      i = close + 1;
    } else if (c === '.') {
      if (i === 0 || i === path.length - 1 || path[i + 1] === '.' || path[i + 1] === '[') fail('misplaced .');
      i++;
    } else {
      let j = i;
      while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
      if (j === i || (out.length > 0 && path[i - 1] !== '.')) fail('expected . before name');
      const name = path.slice(i, j);
      if (FORBIDDEN_SEGMENTS.has(name)) fail(`segment "${name}" is not allowed (it would reach a prototype)`);
      out.push(name);
      i = j;
    }
  }
  return out;
}

/**
 * Reads the value at a path; undefined when any segment is missing. Only own properties (and array elements) are
 * followed, so record content can never lead the walk to a prototype or an inherited member.
 */
export function getPath(obj: unknown, path: FieldPath): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if (cur === null || cur === undefined) return undefined;
    if (typeof seg === 'number') {
      if (!Array.isArray(cur) || seg >= cur.length) return undefined;
      cur = cur[seg];
    } else {
      if (typeof cur !== 'object' || Buffer.isBuffer(cur) || !Object.hasOwn(cur, seg)) return undefined;
      cur = (cur as Record<string, unknown>)[seg];
    }
  }
  return cur;
}

/**
 * Writes a value at a path, creating objects/arrays on the way (used by projections). Refuses prototype segments and
 * defines properties as own data properties, so it never writes through a setter or into a prototype.
 */
export function setPath(target: Record<string, unknown>, path: FieldPath, value: unknown): void {
  for (const seg of path) {
    if (typeof seg === 'string' && FORBIDDEN_SEGMENTS.has(seg))
      throw new ConfigError(`field path segment "${seg}" is not allowed (it would reach a prototype)`);
  }
  let cur: Record<string | number, unknown> = target;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = path[i];
    if (!Object.hasOwn(cur, seg) || cur[seg] === null || typeof cur[seg] !== 'object') {
      defineOwn(cur, seg, typeof path[i + 1] === 'number' ? [] : {});
    }
    cur = cur[seg] as Record<string | number, unknown>;
  }
  defineOwn(cur, path[path.length - 1], value);
}

function defineOwn(obj: object, key: string | number, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}
