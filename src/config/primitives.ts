import { z } from 'zod';
import { parseDurationMs } from './duration';
import { CQL_NAME_PATTERN } from '../store/cassandra';

/** A duration in ms: a non-negative integer or a string like `30s`, `7d`. */
export const Duration = z.union([z.number().int().nonnegative(), z.string()]).transform((v, ctx) => {
  const ms = parseDurationMs(v);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: `invalid duration ${JSON.stringify(v)} (use e.g. 500, 250ms, 30s, 5m, 2h, 7d)` });
    return z.NEVER;
  }
  return ms;
});

/** A size in bytes, 1 KiB to 1 GiB. */
export const ByteSize = z
  .number()
  .int()
  .min(1024)
  .max(1 << 30);

/** Lowercase CQL-safe identifier (keyspace, store names are normalised from free text but must stay simple). */
export const Identifier = z
  .string()
  .regex(CQL_NAME_PATTERN, `must match ${CQL_NAME_PATTERN.source} (lowercase letters, digits, underscore; starts with a letter)`);

/** Pipeline and store names: letters, digits, `-`, `_`, `.`. */
export const Name = z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,47}$/, 'must match ^[A-Za-z][A-Za-z0-9_.-]{0,47}$');
