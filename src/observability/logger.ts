import pino from 'pino';

/** The logger type used across adjunct (pino). */
export type Logger = pino.Logger;

/** Creates the JSON logger; level from the argument, else ADJUNCT_LOG_LEVEL, else info. Secrets are redacted by path. */
export function createLogger(level?: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: level ?? process.env.ADJUNCT_LOG_LEVEL ?? 'info',
      base: { app: 'adjunct' },
      redact: {
        paths: ['*.password', '*.*.password', '*.adminToken', '*.*.adminToken', 'config.kafka.sasl', 'config.cassandra.auth', 'config.registry.auth', '*.authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/** A logger that drops everything (tests, libraries used without a logger). */
export const silentLogger: Logger = pino({ level: 'silent' });
