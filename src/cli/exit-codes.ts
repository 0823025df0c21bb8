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

/** Exit code for an error: the code's exit in ERROR_CODES (a retriable failure is UNAVAILABLE); anything else FAILED. */
export function exitCodeOfError(e: unknown): Exit {
  if (!(e instanceof AdjunctError)) return ExitCode.FAILED;
  if (e.stage === 'config') return ExitCode.CONFIG_INVALID;
  const exit = ERROR_CODES[e.code].exit;
  return exit === ExitCode.FAILED && e.retriable ? ExitCode.UNAVAILABLE : exit;
}
