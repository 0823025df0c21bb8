/**
 * Jest globalTeardown of every project: the run must end by itself. jest waits for the process to exit once the tests
 * are done; a timer, socket or server left open by the code under test (Worker, Lookup, HTTP server, a client not
 * shut down) or by a test would keep it alive and hide the leak. This timer does not keep the process alive
 * (unref): when the process is still running `EXIT_CHECK_MS` after the last teardown, it names the open resources
 * and fails the run with exit code 1.
 */
import { describeOpenSockets } from './open-sockets';

const EXIT_CHECK_MS = Number(process.env.ADJUNCT_EXIT_CHECK_MS ?? 30_000);

/** Arms the exit check. */
export default async function exitCheck(): Promise<void> {
  setTimeout(() => {
    process.stderr.write(
      `\nexit check: jest did not exit ${EXIT_CHECK_MS / 1000} s after the run: open resources ${JSON.stringify(process.getActiveResourcesInfo())}; ` +
        `find them with --detectOpenHandles. Failing the run.\n${describeOpenSockets()}\n`,
    );
    process.exit(1);
  }, EXIT_CHECK_MS).unref();
}
