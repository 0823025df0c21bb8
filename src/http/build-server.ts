import { readFileSync } from 'fs';
import Fastify, { FastifyBaseLogger, FastifyInstance, FastifyReply, LogController } from 'fastify';
import { ConfigError } from '../errors';
import { registerAdminRoutes } from './admin-routes';
import { adminRoutesEnabled } from './auth';
import { errorBody, statusOf } from './error-reply';
import { registerOpsRoutes } from './ops-routes';
import { registerPipelineRoutes } from './pipeline-routes';
import { loopbackHostHook, readTokenHook } from './request-guards';
import { registerStoreRoutes } from './store-routes';
import { lookupSourceOf } from './lookup-source';
import { HttpServerOptions } from './types';

/** Longest path segment (URL-encoded key) a route accepts; longer ones get 414. */
export const MAX_PARAM_LENGTH = 2048;

function readPem(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new ConfigError(
      `worker.http.tls.${key} ${JSON.stringify(file)} cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`,
      { context: { path: `worker.http.tls.${key}` } },
    );
  }
}

/** Validates the bind settings: tokens, when set, have at least 16 characters. */
export function checkHttpSettings(config: HttpServerOptions['config']): void {
  if (config.adminToken !== undefined && config.adminToken.length < 16)
    throw new ConfigError('worker.http.adminToken must be at least 16 characters', { context: { path: 'worker.http.adminToken' } });
  if (config.readToken !== undefined && config.readToken.length < 16)
    throw new ConfigError('worker.http.readToken must be at least 16 characters', { context: { path: 'worker.http.readToken' } });
}

/** Builds (does not listen) the HTTP API: store reads, health/readiness/status/metrics and the admin routes. Works without a worker (serve mode). */
export async function buildHttpServer(o: HttpServerOptions): Promise<FastifyInstance> {
  checkHttpSettings(o.config);
  const c = o.config;
  const app = Fastify({
    loggerInstance: o.logger.child({ component: 'http' }) as unknown as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    requestTimeout: c.requestTimeout ?? 30_000,
    connectionTimeout: c.connectionTimeout ?? 60_000,
    keepAliveTimeout: c.keepAliveTimeout ?? 5_000,
    bodyLimit: 64 * 1024,
    // Unknown query parameters fail validation (400) instead of being silently removed (fastify's default).
    ajv: { customOptions: { removeAdditional: false } },
    // Router-level failures: a path segment over maxParamLength is a 414 (not a 404); anything else unparsable is a 400.
    frameworkErrors: (err, _req, res) => {
      const reply = res as unknown as FastifyReply;
      return err.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? reply
            .code(414)
            .send({ error: 'URI_TOO_LONG', message: `a path segment (store name or key) is longer than ${MAX_PARAM_LENGTH} characters` })
        : reply.code(400).send({ error: 'BAD_REQUEST', message: 'the request URL cannot be parsed' });
    },
    ...(c.tls ? { https: { key: readPem(c.tls.keyFile, 'keyFile'), cert: readPem(c.tls.certFile, 'certFile') } } : {}),
  });
  app.addHook('onRequest', loopbackHostHook(c));
  app.addHook('onRequest', readTokenHook(c));
  app.addHook('onResponse', async (req, reply) => {
    req.log.debug(
      { method: req.method, route: req.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
  app.setErrorHandler((err, req, reply) => {
    const status = statusOf(err);
    if (status >= 500)
      req.log.error({ err: err instanceof Error ? err.message : String(err), route: req.routeOptions.url }, 'request failed');
    return reply.code(status).send(errorBody(err));
  });
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({ error: 'NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0].slice(0, 200)}` }),
  );
  registerOpsRoutes(app, o);
  registerStoreRoutes(app, lookupSourceOf(o), c.maxReplyBytes);
  if (!adminRoutesEnabled(o.config)) {
    app.log.warn(
      { host: o.config.host },
      'admin routes are off: worker.http.host is not loopback and worker.http.adminToken is not set (reads, health and metrics are served)',
    );
  }
  registerPipelineRoutes(app, o);
  registerAdminRoutes(app, o);
  await app.ready();
  return app;
}
