import { loadConfigFile } from '../config';
import { describeError } from '../errors';
import { createLogger } from '../observability/logger';
import { Worker } from '../worker/worker';
import { ExitCode, exitCodeOfError } from './exit-codes';

/** Hook to start the HTTP API next to the worker (set by the http module to avoid a hard dependency here). */
export type HttpStarter = (worker: Worker) => Promise<{ close(): Promise<void>; address: string } | undefined>;

/** `adjunct run`: runs the worker until SIGTERM/SIGINT (graceful drain, exit 0), a fatal error (exit 1) or a failed start (its error's exit code). */
export async function runCommand(configPath: string, opts: { http?: HttpStarter } = {}): Promise<number> {
  const loaded = loadConfigFile(configPath);
  const logger = createLogger(loaded.config.worker.logLevel);
  let fatal = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const worker = new Worker(loaded, {
    logger,
    progressBar: true,
    onFatal: () => {
      fatal = true;
      resolveDone();
    },
  });
  let signalled = false;
  const onSignal = (sig: string) => {
    signalled = true;
    logger.info({ signal: sig }, 'shutdown requested: draining in-flight writes and committing');
    resolveDone();
    // A worker still starting (e.g. waiting for Cassandra) gives the start up at its next step (the wait within 100 ms).
    if (worker.state === 'STARTING') void worker.stop().catch(() => undefined);
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  let http: Awaited<ReturnType<HttpStarter>>;
  try {
    await worker.start();
    http = opts.http && !signalled ? await opts.http(worker) : undefined;
    if (http) logger.info({ address: http.address }, 'HTTP API listening');
  } catch (e) {
    await worker.stop().catch(() => undefined);
    if (signalled) return ExitCode.OK;
    logger.error({ err: describeError(e) }, 'worker failed to start');
    // A dependency that never came up exits UNAVAILABLE (4), a bad config CONFIG_INVALID (2), anything else FAILED (1).
    return exitCodeOfError(e);
  }
  await done;
  await http?.close().catch(() => undefined);
  await worker.stop();
  if (fatal || worker.state === 'FAILED') {
    process.stderr.write(`adjunct: ${worker.lastError?.message ?? 'worker failed'}\n`);
    return ExitCode.FAILED;
  }
  return ExitCode.OK;
}
