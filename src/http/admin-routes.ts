import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { adminRoutesEnabled, bearerMatches } from './auth';
import { refuseCrossSite } from './request-guards';
import { HttpServerOptions } from './types';

/** Admin actions on a pipeline. */
const ADMIN_ACTIONS = ['pause', 'resume', 'reload', 'rollback', 'restart'] as const;

/**
 * Registers POST /pipelines/:name/{pause,resume,reload,rollback,restart}. When an admin token is configured every admin call
 * needs `Authorization: Bearer <token>`; bound beyond loopback without a token, every admin call gets 403 (routes off).
 */
export function registerAdminRoutes(app: FastifyInstance, o: HttpServerOptions): void {
  const token = o.config.adminToken;
  const enabled = adminRoutesEnabled(o.config);
  const guard = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!enabled) {
      return reply.code(403).send({
        error: 'ADMIN_DISABLED',
        message: 'admin routes are off: the API is bound beyond loopback without worker.http.adminToken',
      });
    }
    if (refuseCrossSite(req, reply, o.config)) return reply;
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      req.log.warn({ route: req.routeOptions.url, remote: req.ip }, 'admin call refused: missing or wrong bearer token');
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send({ error: 'UNAUTHORIZED', message: 'admin routes need Authorization: Bearer <adminToken>' });
    }
  };
  for (const action of ADMIN_ACTIONS) {
    app.post<{ Params: { name: string }; Body: { to?: number } | undefined }>(
      `/pipelines/:name/${action}`,
      {
        preHandler: guard,
        schema: {
          querystring: { type: 'object', properties: {}, additionalProperties: false },
          params: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 48 } }, required: ['name'] },
          ...(action === 'rollback'
            ? {
                body: {
                  type: 'object',
                  properties: { to: { type: 'integer', minimum: 1 } },
                  required: ['to'],
                  additionalProperties: false,
                },
              }
            : {}),
        },
      },
      async (req, reply) => {
        if (!o.worker)
          return reply.code(503).send({ error: 'NO_WORKER', message: 'no worker runs in this process (read-only serve mode)' });
        const runner = o.worker.runner(req.params.name);
        req.log.warn({ pipeline: req.params.name, action }, 'admin action');
        switch (action) {
          case 'pause':
            await runner.pause();
            return { pipeline: req.params.name, action, state: runner.state };
          case 'resume':
            await runner.resume();
            return { pipeline: req.params.name, action, state: runner.state };
          case 'reload':
            return reply.code(202).send({ pipeline: req.params.name, action, building: await runner.reload() });
          case 'rollback':
            return { pipeline: req.params.name, action, ...(await runner.rollback(req.body!.to!)) };
          case 'restart':
            if (!runner.restart)
              return reply.code(501).send({ error: 'NOT_IMPLEMENTED', message: 'this worker cannot restart a pipeline in place' });
            return { pipeline: req.params.name, action, state: await runner.restart() };
        }
      },
    );
  }
}
