import * as fc from 'fast-check';
import { installLeanPreparedBatch, leanGetPreparedMultiple, PREPARED_IN_PLACE } from '../../../src/store/cassandra/fast-prepared-batch';

/* eslint-disable @typescript-eslint/no-require-imports */
const PrepareHandler = require('cassandra-driver/lib/prepare-handler');
const utils = require('cassandra-driver/lib/utils');
const errors = require('cassandra-driver/lib/errors');
/* eslint-enable @typescript-eslint/no-require-imports */

// The driver's own method, captured before this file installs the patch.
const original = PrepareHandler.getPreparedMultiple.bind(PrepareHandler);
const lean = leanGetPreparedMultiple(PrepareHandler, {
  adaptNamedParamsPrepared: utils.adaptNamedParamsPrepared,
  ArgumentError: errors.ArgumentError,
});

/** A client whose statements are prepared already; counts the cache look-ups. */
function client(queries: string[]) {
  const infos = new Map(queries.map((q, i) => [q, { queryId: Buffer.from([i]), meta: { columns: [{ name: 'k' }, { name: 'v' }] } }]));
  const c = {
    lookups: 0,
    metadata: {
      getPreparedInfo: (_ks: string, q: string) => {
        c.lookups++;
        return infos.get(q) ?? { queryId: Buffer.from('new'), meta: { columns: [] } };
      },
    },
  };
  return c;
}

const QUERIES = ['INSERT a', 'INSERT b', 'DELETE a'];
const item = fc.oneof(
  fc.record({ query: fc.constantFrom(...QUERIES), params: fc.array(fc.integer(), { maxLength: 3 }) }),
  fc.record({ query: fc.constantFrom(...QUERIES), params: fc.record({ k: fc.integer(), V: fc.integer() }) }),
  fc.constantFrom(...QUERIES),
);

describe('lean cassandra-driver batch preparation', () => {
  it("gives the driver's own entries for any batch", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 30 }), async (batch) => {
        const a = await original(client(QUERIES), null, batch, 'ks');
        const b = await lean(client(QUERIES), null, batch, 'ks');
        expect(b).toEqual(a);
      }),
    );
  });

  it('lets marked rows with positional params be their own entries, with the same fields as the driver gives', async () => {
    const row = (query: string, params: unknown) => ({
      [PREPARED_IN_PLACE]: true as const,
      query,
      params,
      queryId: undefined,
      meta: undefined,
      extra: 1,
    });
    const fields = (e: { query: string; params: unknown; queryId: unknown; meta: unknown }) => ({
      query: e.query,
      params: e.params,
      queryId: e.queryId,
      meta: e.meta,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            item,
            item.map((i) => (typeof i === 'string' ? i : row(i.query, i.params))),
          ),
          { minLength: 1, maxLength: 30 },
        ),
        async (batch) => {
          const a = await original(client(QUERIES), null, batch, 'ks');
          const b = await lean(client(QUERIES), null, batch, 'ks');
          expect(b.map(fields)).toEqual(a.map(fields));
          // A marked row with positional params is the entry itself; one with named params gets an entry of its own.
          batch.forEach((it, i) => {
            if (typeof it === 'object' && PREPARED_IN_PLACE in it) expect((b[i] as unknown) === it).toBe(Array.isArray(it.params));
          });
        },
      ),
    );
  });

  it('hands a batch of only marked rows back as it came', async () => {
    const rows = [1, 2, 3].map((i) => ({
      [PREPARED_IN_PLACE]: true as const,
      query: 'INSERT a',
      params: [i, i],
      queryId: undefined,
      meta: undefined,
    }));
    const b = await lean(client(QUERIES), null, rows, 'ks');
    expect(b).toBe(rows);
    expect(rows.map((r) => r.queryId)).toEqual([Buffer.from([0]), Buffer.from([0]), Buffer.from([0])]);
  });

  it('looks a statement up once per run of entries that share it', async () => {
    const c = client(QUERIES);
    const batch = Array.from({ length: 16 }, (_, i) => ({ query: 'INSERT a', params: [i, i] }));
    await lean(c, null, [...batch, { query: 'INSERT b', params: [1, 2] }, ...batch], 'ks');
    expect(c.lookups).toBe(3);
  });

  it('refuses an entry without a query string, as the driver does', async () => {
    await expect(original(client(QUERIES), null, [{ query: 'INSERT a' }, { params: [] }], 'ks')).rejects.toThrow(
      'Query item should be a string',
    );
    await expect(lean(client(QUERIES), null, [{ query: 'INSERT a' }, { params: [] }], 'ks')).rejects.toThrow(
      'Query item should be a string',
    );
    await expect(lean(client(QUERIES), null, [null], 'ks')).rejects.toThrow('Query item should be a string');
  });

  it('installs once, after its self-check', async () => {
    await expect(installLeanPreparedBatch()).resolves.toBe(true);
    expect(PrepareHandler.getPreparedMultiple).not.toBe(original);
    const c = client(QUERIES);
    await PrepareHandler.getPreparedMultiple(c, null, [{ query: 'INSERT a' }, { query: 'INSERT a' }], 'ks');
    expect(c.lookups).toBe(1);
  });
});
