import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { lookupSourceOf } from './lookup-source';
import { HttpServerOptions, NO_QUERY } from './types';

/** Registers GET /healthz, /readyz, /status and /metrics (worker-backed, or catalog-backed in serve mode). */
export function registerOpsRoutes(app: FastifyInstance, o: HttpServerOptions): void {
  const lookupOf = lookupSourceOf(o);
  let serveRegistry: Registry | undefined;
  const registry = (): Registry => {
    if (o.worker) return o.worker.metrics.registry;
    if (!serveRegistry) {
      serveRegistry = o.registry ?? new Registry();
      if (!o.registry) collectDefaultMetrics({ register: serveRegistry, prefix: 'adjunct_serve_' });
    }
    return serveRegistry;
  };

  app.get('/healthz', { schema: NO_QUERY }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: NO_QUERY }, async (_req, reply) => {
    if (o.worker) {
      if (o.worker.isReady()) return { ready: true };
      const st = o.worker.status();
      const notReady = st.pipelines.filter((p) => p.bootstrap && p.bootstrap.state !== 'READY').map((p) => p.name);
      const stalled = st.pipelines
        .filter((p) => p.state === 'STALLED' || p.state === 'FAILED')
        .map((p) => ({ name: p.name, state: p.state, cause: p.stalledBy ?? p.lastError }));
      return reply.code(503).send({
        ready: false,
        workerState: st.state,
        notReady,
        stalled,
        pipelines: st.pipelines.filter((p) => p.bootstrap).map((p) => ({ name: p.name, ...p.bootstrap })),
      });
    }
    const r = await lookupOf().readiness(o.expectedPipelines ?? []);
    return reply.code(r.ready ? 200 : 503).send(r);
  });

  app.get('/status', { schema: NO_QUERY }, async () => {
    if (o.worker) return o.worker.status();
    const [stores, readiness] = await Promise.all([lookupOf().stores(), lookupOf().readiness(o.expectedPipelines ?? [])]);
    // Each versioned store's writers (source partitions) with their persisted stream time and retention horizon.
    const horizons = Object.fromEntries(
      await Promise.all(
        stores.filter((s) => s.kind === 'versioned').map(async (s) => [s.name, await lookupOf().store(s.name).horizons()] as const),
      ),
    );
    return { mode: 'serve', stores, readiness, horizons };
  });

  app.get('/metrics', { schema: NO_QUERY }, async (_req, reply) => {
    const reg = registry();
    return reply.header('content-type', reg.contentType).send(await reg.metrics());
  });
}
