import { loadReadConfigFile, ReadConfig } from '../config';
import { describeError } from '../errors';
import { CliFailure } from './cli-failure';
import { ExitCode } from './exit-codes';

/** Where a worker's HTTP API is looked for when neither --url nor a config names it. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** Calls the worker's HTTP API; UNAVAILABLE when unreachable, NOT_FOUND on 404, FAILED on other errors. */
export async function callApi(base: string, method: 'GET' | 'POST', path: string, token?: string, payload?: unknown): Promise<unknown> {
  let url: URL;
  try {
    url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  } catch {
    throw new CliFailure(`invalid --url ${JSON.stringify(base)}`, ExitCode.FAILED);
  }
  let res: Response;
  try {
    const headers: Record<string, string> = {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    };
    res = await fetch(url, {
      method,
      headers,
      body: payload === undefined ? undefined : JSON.stringify(payload),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    const c = (e as { cause?: { code?: string; message?: string } }).cause;
    const cause = c?.code ?? c?.message ?? describeError(e);
    throw new CliFailure(`cannot reach the adjunct HTTP API at ${url.origin} (${cause})`, ExitCode.UNAVAILABLE);
  }
  return replyOf(res);
}

/** The body of a reply (JSON when it parses), or the failure its status means. */
async function replyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  if (res.ok) return body;
  const msg =
    typeof body === 'object' && body !== null && 'message' in body ? String((body as { message: unknown }).message) : text.slice(0, 200);
  if (res.status === 404) throw new CliFailure(msg, ExitCode.NOT_FOUND);
  if (res.status === 503) throw new CliFailure(msg, ExitCode.UNAVAILABLE);
  if (res.status === 401) throw new CliFailure(`${msg} (pass --token or set ADJUNCT_ADMIN_TOKEN)`, ExitCode.FAILED);
  throw new CliFailure(`HTTP ${res.status}: ${msg}`, ExitCode.FAILED);
}

/** The worker's HTTP address from a config's worker.http (a wildcard bind is reached on loopback; https with tls). */
function workerUrlOf(config: ReadConfig): string {
  const h = config.worker.http;
  const host = h.host === '0.0.0.0' || h.host === '::' || h.host === '' ? '127.0.0.1' : h.host;
  return `${h.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${h.port}`;
}

/** Where an admin call goes and with which token: --url/--token first, then the config's worker.http, then the defaults. */
export function adminTarget(o: { url?: string; token?: string; config?: string }): { url: string; token?: string } {
  const cfg = o.config ? loadReadConfigFile(o.config).config : undefined;
  return { url: o.url ?? (cfg ? workerUrlOf(cfg) : DEFAULT_URL), token: o.token || cfg?.worker.http.adminToken };
}
