import { AdjunctError, describeError, publicError } from '../errors';
import { CliFailure } from './cli-failure';
import { Exit, ExitCode, exitCodeOfError } from './exit-codes';
import { printJson } from './output';

/** Exit code for an error: CONFIG_INVALID, NOT_FOUND for unknown stores/pipelines/keys, UNAVAILABLE when a service cannot be reached. */
function exitCodeOf(e: unknown): Exit {
  return e instanceof CliFailure ? e.exitCode : exitCodeOfError(e);
}

/** The machine-readable code of a CLI failure. */
function errorCodeOf(e: unknown): string {
  if (e instanceof CliFailure) return e.code;
  if (e instanceof AdjunctError) return e.code;
  return 'FAILED';
}

/** Runs a command body, mapping failures to a message on stderr (or JSON with --json) and an exit code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
      if (process.exitCode === undefined) process.exitCode = ExitCode.OK;
    } catch (e) {
      process.exitCode = exitCodeOf(e);
      const opts = args.find((a): a is { json?: boolean } => typeof a === 'object' && a !== null && !Array.isArray(a) && 'json' in a);
      if (opts?.json)
        printJson({
          error: errorCodeOf(e),
          message: e instanceof CliFailure ? e.message : e instanceof AdjunctError ? e.message : publicError(e).message,
          exitCode: process.exitCode,
        });
      else process.stderr.write(`adjunct: ${e instanceof CliFailure || e instanceof AdjunctError ? e.message : describeError(e)}\n`);
    }
  };
}
