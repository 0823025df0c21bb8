import { LookupError } from './lookup-error';

/** waitUntilReady gave up: the pipeline/store did not reach READY in time (code READY_TIMEOUT, retriable). */
export class ReadyTimeoutError extends LookupError {
  constructor(
    readonly target: string,
    readonly timeoutMs: number,
    readonly lastSeen: Record<string, string>,
  ) {
    const seen =
      Object.entries(lastSeen)
        .map(([p, s]) => `${p}=${s}`)
        .join(', ') || 'no status rows';
    super(`${JSON.stringify(target)} not READY after ${timeoutMs} ms (${seen})`, {
      code: 'READY_TIMEOUT',
      retriable: true,
      context: { target, timeoutMs, lastSeen },
    });
  }
}
