/**
 * Jest globalTeardown of every project: the run must end by itself. jest waits for the process to exit once the tests
 * are done; a timer, socket or server left open by the code under test (Worker, Lookup, HTTP server, a client not
 * shut down) or by a test would keep it alive and hide the leak. This timer does not keep the process alive
 * (unref): when the process is still running `EXIT_CHECK_MS` after the last teardown, it names the open resources
 * and fails the run with exit code 1.
 */
import { describeLateWork } from './late-work';
import { describeOpenSockets } from './open-sockets';

const EXIT_CHECK_MS = Number(process.env.ADJUNCT_EXIT_CHECK_MS ?? 30_000);

const EXIT_CODE_REPORTED = Symbol.for('adjunct.test.exitCodeReported');

/**
 * Names why the run will exit non-zero when process.exitCode is already set at teardown (jest does that silently when
 * code ran after a test file's environment was torn down), so the reason stands at the end of the output.
 */
function reportExitCode(): void {
  const g = globalThis as unknown as Record<symbol, boolean | undefined>;
  if (!process.exitCode || g[EXIT_CODE_REPORTED]) return;
  g[EXIT_CODE_REPORTED] = true;
  const late = describeLateWork();
  process.stderr.write(
    `\nexit check: process.exitCode is ${process.exitCode} at the end of the run, so it fails even if every test passed. ` +
      (late ? `Code ran after a test file's environment was torn down:\n${late}\n` : 'No jest "torn down" message was recorded.\n') +
      `${describeOpenSockets()}\n`,
  );
}

/** Arms the exit check. */
export default async function exitCheck(): Promise<void> {
  reportExitCode();
  setTimeout(() => {
    process.stderr.write(
      `\nexit check: jest did not exit ${EXIT_CHECK_MS / 1000} s after the run: open resources ${JSON.stringify(process.getActiveResourcesInfo())}; ` +
        `find them with --detectOpenHandles. Failing the run.\n${describeOpenSockets()}\n`,
    );
    process.exit(1);
  }, EXIT_CHECK_MS).unref();
}
