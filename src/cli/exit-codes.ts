import { AdjunctError, ERROR_CODES } from '../errors';

/** Process exit codes of the adjunct CLI (documented in the README). */
export const ExitCode = {
  OK: 0,
  /** The worker or command failed at run time (fatal pipeline error, tolerance none). */
  FAILED: 1,
  /** The configuration is invalid. */
  CONFIG_INVALID: 2,
  /** A lookup found nothing / unknown store or pipeline. */
  NOT_FOUND: 3,
  /** A service (Kafka, Cassandra, HTTP API) could not be reached. */
  UNAVAILABLE: 4,
} as const;

/** One of the CLI's exit codes. */
export type Exit = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Exit code for an error: the code's exit in ERROR_CODES (UNKNOWN_PIPELINE is NOT_FOUND whatever its stage); a code
 * whose table exit is FAILED becomes CONFIG_INVALID at the config stage and UNAVAILABLE when retriable; anything else FAILED.
 */
export function exitCodeOfError(e: unknown): Exit {
  if (!(e instanceof AdjunctError)) return ExitCode.FAILED;
  const exit = ERROR_CODES[e.code].exit;
  if (exit !== ExitCode.FAILED) return exit;
  if (e.stage === 'config') return ExitCode.CONFIG_INVALID;
  return e.retriable ? ExitCode.UNAVAILABLE : exit;
}
