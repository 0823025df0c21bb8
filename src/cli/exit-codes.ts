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
