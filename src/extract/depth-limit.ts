import { BadRecordError } from '../errors';
import { ExtractResult, Extractor, isSkip, SourceRecord } from './extractor';

/**
 * Deepest nesting of objects/arrays a stored key or value may have. Deeper values are bad records (stage `extract`,
 * code VALUE_TOO_DEEP): they would be written, but recursive encoders on the read side (JSON replies, serdes) fail on them.
 */
export const MAX_VALUE_DEPTH = 64;

/** Nesting depth of a value (a scalar is 0, `{}` and `[]` are 1), counted iteratively; stops early past `limit`. */
export function valueDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  if (!isContainer(value)) return 0;
  if (isFlat(value)) return 1;
  let max = 0;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > max) max = depth;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (isContainer(child)) stack.push([child, depth + 1]);
  }
  return max;
}

/** True for a container holding no container (the common flat record value): depth 1, found without allocating. */
function isFlat(v: object): boolean {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (isContainer(v[i])) return false;
    return true;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k) && isContainer(o[k])) return false;
  return true;
}

function isContainer(v: unknown): v is object {
  return v !== null && typeof v === 'object' && !ArrayBuffer.isView(v) && !(v instanceof Date);
}

/** Throws a bad-record error when key or value nests deeper than MAX_VALUE_DEPTH. */
export function requireShallow(what: 'key' | 'value', value: unknown, limit = MAX_VALUE_DEPTH): void {
  const depth = valueDepth(value, limit);
  if (depth > limit) {
    throw new BadRecordError(`extracted ${what} nests deeper than ${limit} levels of objects/arrays`, {
      stage: 'extract',
      code: 'VALUE_TOO_DEEP',
      context: { limit },
    });
  }
}

/** Wraps any extractor (built-in, preset or custom module) so over-deep keys and values are rejected as bad records. */
export class DepthLimitedExtractor implements Extractor {
  /** The inner extractor's: the depth check changes nothing. */
  readonly keepsValue: boolean;
  /** The inner extractor's: the depth check only counts the nesting of what the extractor returns. */
  readonly readsValue: boolean;

  constructor(
    private readonly inner: Extractor,
    /** The depth limit. */
    readonly maxValueDepth = MAX_VALUE_DEPTH,
  ) {
    this.keepsValue = inner.keepsValue === true;
    this.readsValue = inner.readsValue !== false;
  }

  extract(record: SourceRecord): ExtractResult | Promise<ExtractResult> {
    const r = this.inner.extract(record);
    return r instanceof Promise ? r.then((x) => this.check(x)) : this.check(r);
  }

  private check(r: ExtractResult): ExtractResult {
    if (isSkip(r)) return r;
    requireShallow('key', r.key, this.maxValueDepth);
    requireShallow('value', r.value, this.maxValueDepth);
    return r;
  }
}
