import { loadConfigFile } from '../config';
import { describeError } from '../errors';
import { createLogger } from '../observability/logger';
import { stoppedWhileStarting } from '../worker/startup-wait';
import { Worker } from '../worker/worker';
import { ExitCode, exitCodeOfError } from './exit-codes';

/** The HTTP API running next to a worker. */
export interface HttpHandle {
  address: string;
  /** Opens the reads once the worker runs (until then they answer 503 WORKER_NOT_STARTED); idempotent. */
  attach(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Hook to start the HTTP API next to the worker (set by the http module to avoid a hard dependency here). It is called
 * before the worker starts, so health, readiness and status answer during the start-up waits; undefined when disabled.
 */
export type HttpStarter = (worker: Worker) => Promise<HttpHandle | undefined>;

/** `adjunct run`: runs the worker until SIGTERM/SIGINT/SIGHUP (graceful drain, exit 0), a fatal error (exit 1) or a failed start (its error's exit code). */
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
  // A hang-up (a closed terminal, a supervisor's HUP) drains like SIGTERM: Node's default would exit at once, undrained.
  process.once('SIGHUP', () => onSignal('SIGHUP'));
  let http: HttpHandle | undefined;
  try {
    // Listening first: /healthz answers while the worker waits for Cassandra or Kafka, so a liveness probe never restarts it.
    http = opts.http ? await opts.http(worker) : undefined;
    if (http) logger.info({ address: http.address }, 'HTTP API listening');
    if (signalled) throw stoppedWhileStarting('binding the HTTP API'); // a signal while the server was binding
    await worker.start();
    // A worker that FAILED during its start (a pipeline failed) has no reads to attach: the fatal path below reports it.
    if (!signalled && worker.state === 'RUNNING') await http?.attach();
  } catch (e) {
    await http?.close().catch(() => undefined);
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
