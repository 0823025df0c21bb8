import { types } from 'cassandra-driver';
import { CqlExecutor } from './cql-executor';

/** Streams the rows of a prepared read page by page (driver paging, one request per page; never the whole result). */
export async function* pagedRows(
  exec: CqlExecutor,
  query: string,
  params: unknown[],
  what: string,
  fetchSize: number,
): AsyncGenerator<types.Row> {
  let pageState: string | undefined;
  do {
    const rs = await exec.read(query, params, what, { fetchSize, pageState, autoPage: false });
    for (const row of rs.rows) yield row;
    pageState = rs.pageState ?? undefined;
  } while (pageState);
}

/**
 * Source partitions present in a table with a `partition` (or, bucketed, `(partition, bucket)`) partition key, ascending:
 * one SELECT DISTINCT read of the partition keys (a bucketed table lists every bucket of every partition).
 */
export async function listPartitions(exec: CqlExecutor, qualifiedTable: string, what: string, bucketed = false): Promise<number[]> {
  const cql = `SELECT DISTINCT partition${bucketed ? ', bucket' : ''} FROM ${qualifiedTable}`;
  const rs = await exec.read(cql, [], what, { fetchSize: 10_000 });
  return [...new Set(rs.rows.map((r) => Number(r.partition)))].sort((a, b) => a - b);
}

/** Merges async iterables that are each sorted by compare into one sorted stream (k-way merge, lazy). */
export async function* mergeSorted<T>(sources: AsyncIterable<T>[], compare: (a: T, b: T) => number): AsyncGenerator<T> {
  const iters = sources.map((s) => s[Symbol.asyncIterator]());
  const heads: (IteratorResult<T> | undefined)[] = await Promise.all(iters.map((it) => it.next()));
  try {
    for (;;) {
      let best = -1;
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i];
        if (h === undefined || h.done) continue;
        if (best < 0 || compare(h.value, (heads[best] as IteratorYieldResult<T>).value) < 0) best = i;
      }
      if (best < 0) return;
      yield (heads[best] as IteratorYieldResult<T>).value;
      heads[best] = await iters[best].next();
    }
  } finally {
    await Promise.all(
      iters.map(async (it, i) => {
        const h = heads[i];
        if (h !== undefined && !h.done && it.return) await it.return(undefined);
      }),
    );
  }
}
