import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerMatches, isLoopbackHost } from './auth';
import { HttpSettings } from './types';

/** Routes a read token never guards (liveness and readiness probes). */
const OPEN_ROUTES = new Set(['/healthz', '/readyz']);

/** The hostname of a Host header or Origin URL (no port, no brackets), lower case; undefined when unparsable. */
function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Refuses admin calls a browser could send cross-site: a foreign Origin (not the request's own Host), a Host that is not
 * loopback while the API is bound to loopback (DNS rebinding), and any body that is not JSON (text/plain and forms
 * need no CORS preflight). Returns true when the reply was sent.
 */
export function refuseCrossSite(req: FastifyRequest, reply: FastifyReply, settings: HttpSettings): boolean {
  const host = req.headers.host ?? '';
  if (foreignHost(req, settings)) {
    return forbid(
      req,
      reply,
      'FOREIGN_HOST',
      `admin routes answer only requests addressed to a loopback host (Host ${JSON.stringify(host)})`,
    );
  }
  // Browsers say where a request comes from even when they send no Origin.
  if (req.headers['sec-fetch-site'] === 'cross-site')
    return forbid(req, reply, 'FOREIGN_ORIGIN', 'admin routes refuse cross-site requests');
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host.toLowerCase();
    } catch {
      originHost = undefined;
    }
    if (originHost !== host.toLowerCase()) return forbid(req, reply, 'FOREIGN_ORIGIN', 'admin routes refuse cross-origin requests');
  }
  const type = req.headers['content-type'];
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if ((type !== undefined || hasBody) && !/^application\/json\s*(;|$)/i.test(String(type ?? ''))) {
    reply
      .code(415)
      .send({ error: 'UNSUPPORTED_MEDIA_TYPE', message: 'admin routes take no body or a JSON body (Content-Type: application/json)' });
    return true;
  }
  return false;
}

/** True when the API is bound to loopback and the request is addressed to another host (a DNS-rebinding page). */
function foreignHost(req: FastifyRequest, settings: HttpSettings): boolean {
  if (!isLoopbackHost(settings.host)) return false;
  const hostname = hostnameOf(req.headers.host ?? '');
  return hostname === undefined || !isLoopbackHost(hostname);
}

/**
 * onRequest hook for every route: an API bound to loopback answers only requests addressed to a loopback host, so a
 * page on another site that rebinds its own name to 127.0.0.1 cannot read stores, status or metrics either.
 */
export function loopbackHostHook(settings: HttpSettings) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!foreignHost(req, settings)) return;
    req.log.warn({ route: req.routeOptions.url, remote: req.ip, refused: 'FOREIGN_HOST' }, 'request refused');
    await reply.code(403).send({
      error: 'FOREIGN_HOST',
      message: `this API is bound to loopback and answers only requests addressed to a loopback host (Host ${JSON.stringify(req.headers.host ?? '')})`,
    });
  };
}

function forbid(req: FastifyRequest, reply: FastifyReply, error: string, message: string): true {
  req.log.warn({ route: req.routeOptions.url, remote: req.ip, refused: error }, 'admin call refused');
  reply.code(403).send({ error, message });
  return true;
}

/** onRequest hook requiring `Authorization: Bearer <readToken>` (or the admin token) on every route but the probes; a no-op without a read token. */
export function readTokenHook(settings: HttpSettings) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const token = settings.readToken;
    if (token === undefined || OPEN_ROUTES.has(req.url.split('?')[0])) return;
    const auth = req.headers.authorization;
    if (bearerMatches(auth, token) || (settings.adminToken !== undefined && bearerMatches(auth, settings.adminToken))) return;
    await reply
      .code(401)
      .header('www-authenticate', 'Bearer')
      .send({ error: 'UNAUTHORIZED', message: 'this API needs Authorization: Bearer <readToken>' });
  };
}
