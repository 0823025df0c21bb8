/**
 * A leaner cassandra-driver batch preparation (cassandra-driver 4.8.0 is pinned). Before sending a batch of prepared
 * statements the driver looks every entry's statement up again, with an `await` and a `keyspace + query` key string
 * per entry: about 550 B per row of a batch (bench heap profile), for batches whose rows all share one INSERT. The
 * replacement looks a statement up once per run of entries that share it and builds the same entries. A batch item
 * marked PREPARED_IN_PLACE (the write batcher's rows, which declare `queryId` and `meta`) with positional params is its
 * own entry: its statement's id and metadata are set on it, and a batch of only such items is handed back as it came,
 * with no entry object per row. It is installed only if it gives exactly the driver's own result on a self-check.
 */

/**
 * Marks a batch item that may serve as its own prepared entry: an object with `query`, positional `params` and declared
 * `queryId` and `meta` fields, which the lean preparation fills in.
 */
export const PREPARED_IN_PLACE: unique symbol = Symbol('adjunct.preparedInPlace');

/** A batch item that is its own prepared entry once prepared. */
export interface InPlaceEntry {
  readonly [PREPARED_IN_PLACE]: true;
  query: string;
  params: unknown[];
  queryId: Buffer | undefined;
  meta: unknown;
}

/** What the driver knows of a prepared statement: its id and metadata. */
interface Prepared {
  queryId: Buffer;
  meta: { columns: unknown[] };
}

/** One batch entry as the driver's batch request reads it. */
interface PreparedEntry extends Prepared {
  query: string;
  params: unknown;
}

type BatchItem = string | { query?: unknown; params?: unknown; [PREPARED_IN_PLACE]?: true } | null | undefined;

/** Whether an item serves as its own entry: marked, with positional params (named ones need an array built). */
function inPlace(item: BatchItem): item is BatchItem & InPlaceEntry {
  return typeof item === 'object' && item !== null && item[PREPARED_IN_PLACE] === true && Array.isArray(item.params);
}

/** The driver's `Client` as the prepare handler sees it: only its prepared-statement cache. */
interface ClientLike {
  metadata: { getPreparedInfo(keyspace: string | undefined, query: string): Partial<Prepared> & { preparing?: boolean } };
}

type GetPreparedMultiple = (
  client: ClientLike,
  loadBalancing: unknown,
  queries: BatchItem[],
  keyspace?: string,
) => Promise<PreparedEntry[]>;

/** The driver's PrepareHandler class: its two static methods. */
interface PrepareHandlerClass {
  getPrepared(client: ClientLike, loadBalancing: unknown, query: string, keyspace?: string): Promise<Prepared>;
  getPreparedMultiple: GetPreparedMultiple;
}

/** The driver helpers the entries are built with. */
interface DriverHelpers {
  adaptNamedParamsPrepared(params: unknown, columns: unknown[]): unknown;
  ArgumentError: new (message: string) => Error;
}

/** The replacement for PrepareHandler.getPreparedMultiple, on the driver's own getPrepared and helpers. */
export function leanGetPreparedMultiple(handler: PrepareHandlerClass, helpers: DriverHelpers): GetPreparedMultiple {
  return async function getPreparedMultiple(client, loadBalancing, queries, keyspace) {
    let allInPlace = true;
    for (const item of queries) if (!inPlace(item)) allInPlace = false;
    const result: PreparedEntry[] = allInPlace ? (queries as PreparedEntry[]) : [];
    let lastQuery: string | undefined;
    let last: Prepared | undefined;
    for (const item of queries) {
      const query = item ? (typeof item === 'string' ? item : item.query) : undefined;
      if (typeof query !== 'string') throw new helpers.ArgumentError('Query item should be a string');
      if (last === undefined || query !== lastQuery) {
        const { queryId, meta } = await handler.getPrepared(client, loadBalancing, query, keyspace);
        last = { queryId, meta };
        lastQuery = query;
      }
      if (allInPlace || inPlace(item)) {
        const entry = item as InPlaceEntry;
        entry.queryId = last.queryId;
        entry.meta = last.meta;
        if (!allInPlace) result.push(entry as unknown as PreparedEntry);
        continue;
      }
      const params = typeof item === 'string' ? undefined : item?.params;
      result.push({ query, params: helpers.adaptNamedParamsPrepared(params, last.meta.columns), queryId: last.queryId, meta: last.meta });
    }
    return result;
  };
}

/** A client whose statements are all prepared already (no request is ever sent), for the self-check. */
function preparedClient(): ClientLike {
  const infos = new Map<string, Prepared>();
  const info = (query: string): Prepared => {
    let i = infos.get(query);
    if (i === undefined) {
      i = { queryId: Buffer.from(`id:${query}`), meta: { columns: [{ name: 'a' }, { name: 'b' }] } };
      infos.set(query, i);
    }
    return i;
  };
  return { metadata: { getPreparedInfo: (_keyspace, query) => info(query) } };
}

/** A batch item that is its own entry, as the write batcher's rows are. */
function inPlaceRow(query: string, params: unknown[]): InPlaceEntry {
  return { [PREPARED_IN_PLACE]: true, query, params, queryId: undefined, meta: undefined };
}

/** What the request reads of an entry. */
function entryOf(e: PreparedEntry): Record<string, unknown> {
  return { query: e.query, params: e.params, queryId: e.queryId, meta: e.meta };
}

/**
 * Whether both give the same entries for batches of shared, alternating and named-parameter statements, and for
 * batches of in-place rows (alone, handed back as they came, and mixed with other items).
 */
async function agrees(original: GetPreparedMultiple, lean: GetPreparedMultiple): Promise<boolean> {
  const client = preparedClient();
  const batches: BatchItem[][] = [
    [
      { query: 'INSERT a', params: [1, 2] },
      { query: 'INSERT a', params: [3, 4] },
    ],
    [{ query: 'INSERT a', params: [1, 2] }, { query: 'INSERT b', params: { b: 2, a: 1 } }, 'INSERT b', { query: 'INSERT a' }],
    [inPlaceRow('INSERT a', [1, 2]), inPlaceRow('INSERT a', [3, 4]), inPlaceRow('INSERT b', [5, 6])],
    [inPlaceRow('INSERT a', [1, 2]), { query: 'INSERT b', params: { b: 2, a: 1 } }, inPlaceRow('INSERT b', [5, 6]), 'INSERT a'],
  ];
  for (const batch of batches) {
    const a = await original(client, null, batch, 'ks');
    const b = await lean(client, null, batch, 'ks');
    if (JSON.stringify(a.map(entryOf)) !== JSON.stringify(b.map(entryOf)) || a.length !== b.length) return false;
    if (batch.every(inPlace) && b !== (batch as unknown)) return false;
  }
  return true;
}

let installed: Promise<boolean> | undefined;

/** Installs the lean batch preparation on cassandra-driver's PrepareHandler once; resolves to whether it is in use. */
export function installLeanPreparedBatch(): Promise<boolean> {
  installed ??= (async () => {
    try {
      /* eslint-disable @typescript-eslint/no-require-imports */
      const PrepareHandler = require('cassandra-driver/lib/prepare-handler') as PrepareHandlerClass;
      const utils = require('cassandra-driver/lib/utils') as Pick<DriverHelpers, 'adaptNamedParamsPrepared'>;
      const errors = require('cassandra-driver/lib/errors') as Pick<DriverHelpers, 'ArgumentError'>;
      /* eslint-enable @typescript-eslint/no-require-imports */
      const original = PrepareHandler.getPreparedMultiple;
      if (typeof original !== 'function' || typeof PrepareHandler.getPrepared !== 'function') return false;
      const lean = leanGetPreparedMultiple(PrepareHandler, {
        adaptNamedParamsPrepared: utils.adaptNamedParamsPrepared,
        ArgumentError: errors.ArgumentError,
      });
      if (!(await agrees(original.bind(PrepareHandler), lean))) return false;
      PrepareHandler.getPreparedMultiple = lean;
      return true;
    } catch {
      // A driver without these modules keeps its own preparation.
      return false;
    }
  })();
  return installed;
}
