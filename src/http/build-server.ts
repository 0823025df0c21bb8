import Fastify, { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ConfigError } from '../errors';
import { registerAdminRoutes } from './admin-routes';
import { adminRoutesEnabled } from './auth';
import { errorBody, statusOf } from './error-reply';
import { registerOpsRoutes } from './ops-routes';
import { registerStoreRoutes } from './store-routes';
import { HttpServerOptions } from './types';

/** Validates the bind settings: an admin token, when set, has at least 16 characters. */
export function checkHttpSettings(config: HttpServerOptions['config']): void {
  if (config.adminToken !== undefined && config.adminToken.length < 16) throw new ConfigError('worker.http.adminToken must be at least 16 characters', { context: { path: 'worker.http.adminToken' } });
}

/** Builds (does not listen) the HTTP API: store reads, health/readiness/status/metrics and the admin routes. Works without a worker (serve mode). */
export async function buildHttpServer(o: HttpServerOptions): Promise<FastifyInstance> {
  checkHttpSettings(o.config);
  const app = Fastify({
    loggerInstance: o.logger.child({ component: 'http' }) as unknown as FastifyBaseLogger,
    disableRequestLogging: true,
    routerOptions: { maxParamLength: 2048 },
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.debug({ method: req.method, route: req.routeOptions.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  app.setErrorHandler((err, req, reply) => {
    const status = statusOf(err);
    if (status >= 500) req.log.error({ err: err instanceof Error ? err.message : String(err), route: req.routeOptions.url }, 'request failed');
    return reply.code(status).send(errorBody(err));
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: 'NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0]}` }));
  registerOpsRoutes(app, o);
  registerStoreRoutes(app, o.lookup);
  if (!adminRoutesEnabled(o.config)) {
    app.log.warn({ host: o.config.host }, 'admin routes are off: worker.http.host is not loopback and worker.http.adminToken is not set (reads, health and metrics are served)');
  }
  registerAdminRoutes(app, o);
  await app.ready();
  return app;
}
