import { ErrorCode } from '../errors';
import { Exit } from './exit-codes';

/** The code a CLI failure reports in --json output: the error table's code where one applies, else the exit's name. */
export type CliFailureCode = 'OK' | 'FAILED' | 'UNAVAILABLE' | ErrorCode;

/** The error code a CLI failure reports in --json output, per exit code. */
const CLI_FAILURE_CODES: Record<Exit, CliFailureCode> = { 0: 'OK', 1: 'FAILED', 2: 'CONFIG_INVALID', 3: 'NOT_FOUND', 4: 'UNAVAILABLE' };

/** A CLI failure carrying its exit code. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: Exit,
    readonly code: CliFailureCode = CLI_FAILURE_CODES[exitCode],
  ) {
    super(message);
  }
}
