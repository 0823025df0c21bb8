import pino from 'pino';
import { ConfigError } from '../errors';

/** The logger type used across adjunct (pino). */
export type Logger = pino.Logger;

/** Log levels accepted by config, ADJUNCT_LOG_LEVEL and --log-level. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** Keys pino writes itself; a log object never repeats them. */
const RESERVED_KEYS = new Set(['level', 'time', 'msg']);

/** The effective level: ADJUNCT_LOG_LEVEL (set by --log-level too) over the config's worker.logLevel, else info. */
export function resolveLogLevel(configLevel?: string): string {
  const env = process.env.ADJUNCT_LOG_LEVEL?.trim().toLowerCase();
  const level = env || configLevel || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new ConfigError(
      `invalid log level ${JSON.stringify(level)}${env ? ' (from ADJUNCT_LOG_LEVEL or --log-level)' : ''}: use one of ${LOG_LEVELS.join(', ')}`,
      { context: { path: 'worker.logLevel' } },
    );
  }
  return level;
}

/**
 * Drops keys of a log object that the logger's bindings (or pino itself) already write, so that every JSON line has
 * unique keys (a child bound to `pipeline` logging `{ pipeline }` again would repeat it).
 */
function dropDuplicateKeys(this: pino.Logger, args: Parameters<pino.LogFn>, method: pino.LogFn): void {
  const first = args[0] as unknown;
  if (first !== null && typeof first === 'object' && !(first instanceof Error)) {
    const bound = this.bindings();
    const obj = first as Record<string, unknown>;
    if (Object.keys(obj).some((k) => k in bound || RESERVED_KEYS.has(k))) {
      const kept: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(obj)) if (!(k in bound) && !RESERVED_KEYS.has(k)) kept[k] = v;
      args[0] = kept as never;
    }
  }
  method.apply(this, args);
}

/** Creates the JSON logger (level from resolveLogLevel); secrets are redacted by path; every line has unique keys. */
export function createLogger(configLevel?: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: resolveLogLevel(configLevel),
      base: { app: 'adjunct' },
      hooks: { logMethod: dropDuplicateKeys },
      redact: {
        paths: [
          '*.password',
          '*.*.password',
          '*.adminToken',
          '*.*.adminToken',
          '*.readToken',
          '*.*.readToken',
          'config.kafka.sasl',
          'config.cassandra.auth',
          'config.registry.auth',
          '*.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/** A logger that drops everything (tests, libraries used without a logger). */
export const silentLogger: Logger = pino({ level: 'silent' });
