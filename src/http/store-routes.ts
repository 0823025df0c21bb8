import type { FastifyInstance, FastifyReply } from 'fastify';
import { InvalidArgumentError } from '../errors';
import { decodeCursor, encodeCursor, LookupRecord, parseKeyText, toJsonValue } from '../lookup';
import { LookupSource, NO_QUERY } from './types';
import {
  cutHistoryPage,
  decodeHistoryCursor,
  DEFAULT_MAX_REPLY_BYTES,
  HISTORY_LIMIT,
  pageRange,
  parseTimeParam,
  describeTime,
} from './history-page';

const storeParam = { type: 'string', minLength: 1, maxLength: 249 } as const;
/** A time: epoch milliseconds or ISO-8601 (parsed by parseTimeParam). */
const timestamp = { type: 'string', minLength: 1, maxLength: 40 } as const;
const historyLimit = { type: 'integer', minimum: 1, maximum: HISTORY_LIMIT.max, default: HISTORY_LIMIT.default } as const;
const limit = { type: 'integer', minimum: 1, maximum: 10_000, default: 100 } as const;
const partition = { type: 'integer', minimum: 0, maximum: 2147483647 } as const;

interface KeyParams {
  store: string;
  key: string;
}

function recordJson(r: LookupRecord<unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { value: toJsonValue(r.value) };
  if (r.timestamp !== undefined) out.timestamp = r.timestamp;
  if (r.validTo !== undefined) out.validTo = r.validTo;
  return out;
}

function notFound(reply: FastifyReply, message: string): FastifyReply {
  return reply.code(404).send({ error: 'NOT_FOUND', message });
}

/** Registers the read routes: GET /stores, key get/as-of, history, range and prefix scans (JSON out; Buffers base64, bigints as strings). */
export function registerStoreRoutes(app: FastifyInstance, lookupOf: LookupSource, maxReplyBytes = DEFAULT_MAX_REPLY_BYTES): void {
  app.get('/stores', { schema: NO_QUERY }, async () => ({ stores: await lookupOf().stores() }));

  app.get<{ Params: { store: string } }>(
    '/stores/:store',
    { schema: { ...NO_QUERY, params: { type: 'object', properties: { store: storeParam }, required: ['store'] } } },
    async (req) => lookupOf().store(req.params.store).info(),
  );

  app.get<{ Params: KeyParams; Querystring: { asOf?: string; partition?: number; validTo?: boolean } }>(
    '/stores/:store/keys/:key',
    {
      schema: {
        params: { type: 'object', properties: { store: storeParam, key: { type: 'string', minLength: 1 } }, required: ['store', 'key'] },
        querystring: {
          type: 'object',
          // validTo=false: the version as of asOf without its validTo, one Cassandra read instead of two.
          properties: { asOf: timestamp, partition, validTo: { type: 'boolean' } },
          additionalProperties: false,
        },
      },
    },
    async (req, reply) => {
      const s = await lookupOf().store(req.params.store).pinned();
      const info = await s.info();
      const key = parseKeyText(info.keySerde, req.params.key);
      const asOf = parseTimeParam('asOf', req.query.asOf);
      const rec = await s.get(key, asOf, { partition: req.query.partition, validTo: req.query.validTo });
      if (rec === null) {
        const when = asOf === undefined ? '' : ` as of ${describeTime(asOf)}`;
        return notFound(reply, `key ${JSON.stringify(req.params.key)} not found in store ${JSON.stringify(info.name)}${when}`);
      }
      return { store: info.name, key: toJsonValue(key), ...recordJson(rec), generation: info.generation };
    },
  );

  app.get<{
    Params: KeyParams;
    Querystring: { from?: string; to?: string; order?: 'asc' | 'desc'; partition?: number; limit: number; cursor?: string };
  }>(
    '/stores/:store/keys/:key/history',
    {
      schema: {
        params: { type: 'object', properties: { store: storeParam, key: { type: 'string', minLength: 1 } }, required: ['store', 'key'] },
        querystring: {
          type: 'object',
          properties: {
            from: timestamp,
            to: timestamp,
            order: { type: 'string', enum: ['asc', 'desc'] },
            partition,
            limit: historyLimit,
            cursor: { type: 'string', minLength: 1, maxLength: 64 },
          },
          additionalProperties: false,
        },
      },
    },
    async (req) => {
      const s = await lookupOf().store(req.params.store).pinned();
      const info = await s.info();
      const key = parseKeyText(info.keySerde, req.params.key);
      const q = req.query;
      const order = q.order ?? 'desc';
      const cursor = q.cursor === undefined ? undefined : decodeHistoryCursor(q.cursor, order);
      const [from, to] = [parseTimeParam('from', q.from), parseTimeParam('to', q.to)];
      if (from !== undefined && to !== undefined && from > to) throw new InvalidArgumentError(`from ${from} must not be after to ${to}`);
      const range = pageRange(from, to, cursor);
      const versions =
        range.from !== undefined && range.to !== undefined && range.from > range.to
          ? []
          : await s.history(key, { fromTime: range.from, toTime: range.to, order, maxVersions: q.limit + 1 }, { partition: q.partition });
      const page = cutHistoryPage(versions, recordJson, { limit: q.limit, maxBytes: maxReplyBytes, order, cursor });
      const out: Record<string, unknown> = { store: info.name, key: toJsonValue(key), versions: page.items, generation: info.generation };
      if (page.next !== undefined) out.nextCursor = page.next;
      return out;
    },
  );

  app.get<{ Params: { store: string }; Querystring: { from?: string; to?: string; limit: number; cursor?: string } }>(
    '/stores/:store/range',
    {
      schema: {
        params: { type: 'object', properties: { store: storeParam }, required: ['store'] },
        querystring: {
          type: 'object',
          properties: { from: { type: 'string' }, to: { type: 'string' }, limit, cursor: { type: 'string', minLength: 1 } },
          additionalProperties: false,
        },
      },
    },
    async (req) => {
      const s = await lookupOf().store(req.params.store).pinned();
      const info = await s.info();
      const q = req.query;
      const page = await s.page({
        from: q.from === undefined ? undefined : parseKeyText(info.keySerde, q.from),
        to: q.to === undefined ? undefined : parseKeyText(info.keySerde, q.to),
        after: q.cursor === undefined ? undefined : decodeCursor(q.cursor),
        limit: q.limit,
      });
      return pageJson(info.name, page);
    },
  );

  app.get<{ Params: { store: string; p: string }; Querystring: { limit: number; cursor?: string } }>(
    '/stores/:store/prefix/:p',
    {
      schema: {
        params: { type: 'object', properties: { store: storeParam, p: { type: 'string', minLength: 1 } }, required: ['store', 'p'] },
        querystring: { type: 'object', properties: { limit, cursor: { type: 'string', minLength: 1 } }, additionalProperties: false },
      },
    },
    async (req) => {
      const s = await lookupOf().store(req.params.store).pinned();
      const info = await s.info();
      const page = await s.page({
        prefix: parseKeyText(info.keySerde, req.params.p),
        after: req.query.cursor === undefined ? undefined : decodeCursor(req.query.cursor),
        limit: req.query.limit,
      });
      return pageJson(info.name, page);
    },
  );
}

function pageJson(
  store: string,
  page: { items: { key: unknown; value: unknown }[]; next?: Buffer; generation: number },
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    store,
    items: page.items.map((e) => ({ key: toJsonValue(e.key), value: toJsonValue(e.value) })),
    generation: page.generation,
  };
  if (page.next !== undefined) out.nextCursor = encodeCursor(page.next);
  return out;
}
