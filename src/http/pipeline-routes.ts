import type { FastifyInstance, FastifyReply } from 'fastify';
import { AdjunctError } from '../errors';
import { HttpPipelineStatus, HttpServerOptions, NO_QUERY } from './types';

const nameParams = { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 48 } }, required: ['name'] } as const;

/** A partition row of a pipeline status: lag, offsets, stream time and retention horizon (ISO times next to epoch ms). */
function partitionJson(row: object): Record<string, unknown> {
  const p = row as Record<string, unknown>;
  const streamTime = (p.streamTime ?? p.observedStreamTime ?? null) as number | null;
  const horizon = (p.horizon ?? null) as number | null;
  return {
    topic: p.topic,
    partition: p.partition,
    lag: p.lag ?? null,
    committedOffset: p.committedOffset ?? null,
    endOffset: p.endOffset ?? null,
    streamTime,
    streamTimeIso: isoOrNull(streamTime),
    horizon,
    horizonIso: isoOrNull(horizon),
  };
}

function isoOrNull(ms: number | null): string | null {
  // A Date shows ±8.64e15 ms at most (a stray record timestamp can put stream time beyond it).
  return ms === null || !Number.isFinite(ms) || Math.abs(ms) > 8.64e15 ? null : new Date(ms).toISOString();
}

/** Kafka Connect–style status of one pipeline: state, generation, per-partition lag and stream time, last error (public form). */
function pipelineStatusJson(workerId: string | undefined, p: HttpPipelineStatus): Record<string, unknown> {
  return {
    name: p.name,
    state: p.state ?? 'UNKNOWN',
    generation: p.generation ?? null,
    store: p.store ?? null,
    worker: workerId ?? null,
    partitions: (p.partitions ?? []).map(partitionJson),
    lastError: p.lastError ?? null,
    ...(p.stalledBy ? { stalledBy: p.stalledBy } : {}),
    ...(p.bootstrap ? { bootstrap: p.bootstrap } : {}),
    ...(p.building ? { building: { generation: p.building.generation } } : {}),
    ...(p.consumer ? { consumer: p.consumer } : {}),
  };
}

function noWorker(reply: FastifyReply): FastifyReply {
  return reply.code(503).send({ error: 'NO_WORKER', message: 'no worker runs in this process (read-only serve mode)' });
}

/** Registers GET /pipelines and GET /pipelines/:name/status (read routes; the restart route is an admin route). */
export function registerPipelineRoutes(app: FastifyInstance, o: HttpServerOptions): void {
  app.get('/pipelines', { schema: NO_QUERY }, async (_req, reply) => {
    if (!o.worker) return noWorker(reply);
    const st = o.worker.status();
    return {
      worker: st.workerId ?? null,
      state: st.state,
      pipelines: st.pipelines.map((p) => ({ name: p.name, state: p.state ?? 'UNKNOWN', generation: p.generation ?? null })),
    };
  });

  app.get<{ Params: { name: string } }>('/pipelines/:name/status', { schema: { ...NO_QUERY, params: nameParams } }, async (req, reply) => {
    if (!o.worker) return noWorker(reply);
    const st = o.worker.status();
    const p = st.pipelines.find((x) => x.name === req.params.name);
    if (!p && (st.state === 'CREATED' || st.state === 'STARTING'))
      throw new AdjunctError('the worker is still starting; pipelines report their status once built', {
        code: 'WORKER_NOT_STARTED',
        stage: 'config',
      });
    if (!p) throw new AdjunctError(`no pipeline named ${JSON.stringify(req.params.name)}`, { code: 'UNKNOWN_PIPELINE', stage: 'config' });
    return pipelineStatusJson(st.workerId, p);
  });
}
