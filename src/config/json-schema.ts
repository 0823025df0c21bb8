import { z } from 'zod';
import { Duration } from './primitives';
import { AdjunctConfigSchema } from './schema';

/** The configuration schema as JSON Schema (draft 2020-12) for editors. */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(AdjunctConfigSchema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      const def = ctx.zodSchema._zod.def as { type: string; innerType?: unknown; defaultValue?: unknown };
      const duration = ctx.zodSchema === Duration || ((def.type === 'default' || def.type === 'optional') && def.innerType === Duration);
      if (!duration) return;
      const js = ctx.jsonSchema as Record<string, unknown>;
      delete js.anyOf;
      js.type = ['integer', 'string'];
      js.pattern = DURATION_PATTERN;
      js.format = 'duration';
      if (def.type === 'default') js.default = formatDurationMs(def.defaultValue as number);
      if (typeof js.description === 'string' && js.description.includes('duration:')) return;
      const own = typeof js.description === 'string' ? `${js.description}; ` : '';
      js.description = `${own}duration: milliseconds, or a number with ms, s, m, h, d or w (e.g. 250ms, 30s, 7d)`;
    },
  });
}

/** The string form of a duration the JSON Schema accepts (a bare integer is milliseconds). */
const DURATION_PATTERN = '^\\s*\\d+\\s*(ms|s|m|h|d|w)?\\s*$';

/** Shortest exact unit form of a duration in ms (86400000 → "1d", 1500 → "1500ms"). */
export function formatDurationMs(ms: number): string {
  const units: [string, number][] = [
    ['w', 604_800_000],
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  for (const [u, f] of units) if (ms > 0 && ms % f === 0) return `${ms / f}${u}`;
  return `${ms}ms`;
}
