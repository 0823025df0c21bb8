import { loadConfigFile } from '../config';
import { describeError } from '../errors';
import { createLogger } from '../observability/logger';
import { Worker } from '../worker/worker';
import { ExitCode } from './exit-codes';

/** Hook to start the HTTP API next to the worker (set by the http module to avoid a hard dependency here). */
export type HttpStarter = (worker: Worker) => Promise<{ close(): Promise<void>; address: string } | undefined>;

/** `adjunct run`: runs the worker until SIGTERM/SIGINT (graceful drain, exit 0) or a fatal error (exit 1). */
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
  const onSignal = (sig: string) => {
    logger.info({ signal: sig }, 'shutdown requested: draining in-flight writes and committing');
    resolveDone();
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  let http: Awaited<ReturnType<HttpStarter>>;
  try {
    await worker.start();
    http = opts.http ? await opts.http(worker) : undefined;
    if (http) logger.info({ address: http.address }, 'HTTP API listening');
  } catch (e) {
    logger.error({ err: describeError(e) }, 'worker failed to start');
    await worker.stop().catch(() => undefined);
    return ExitCode.FAILED;
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
