import { CassandraVersionedStore } from '../../../src/store/cassandra/cassandra-versioned-store';
import { int64Bytes } from '../../../src/store/cassandra/cql-types';
import { VersionedTableReader } from '../../../src/store/cassandra/versioned-table-reader';
import { StreamTimeTable } from '../../../src/store/cassandra/stream-time-table';
import { stringSerde } from '../../../src/store/serde';
import { RowListener } from '../../../src/store/types';

/** A versioned store on an in-memory stand-in for its table reader, recording the deletes it sends. */
function storeOnFakeTable() {
  const rows = new Map<string, { validFrom: number; value: Buffer | null }[]>();
  const deletes: { query: string; key: string; bound: number }[] = [];
  const exec = {
    // As the executor without a batcher: times as 8 bytes.
    rowInt64: int64Bytes,
    issueRow: (row: { params: unknown[] }, _what: string, l: RowListener) => {
      const key = (row.params[0] as Buffer).toString();
      const list = rows.get(key) ?? [];
      list.push({ validFrom: Number((row.params[1] as Buffer).readBigInt64BE(0)), value: row.params[2] as Buffer | null });
      rows.set(key, list);
      setImmediate(() => l.rowWritten());
    },
    write: async (query: string, params: unknown[]) =>
      void deletes.push({ query, key: (params[0] as Buffer).toString(), bound: params[1] as number }),
    long: (n: number) => n,
  };
  const reader = {
    exec,
    ref: { buckets: undefined },
    cql: { insert: 'INSERT', deleteBefore: 'DELETE <', deleteUpTo: 'DELETE <=' },
    partitionFor: () => undefined,
    bucketFor: () => undefined,
    rowKey: (k: Buffer) => [k],
    insertValues: (k: Buffer, _p: unknown, _b: unknown, ts: Buffer, v: Buffer | null) => [k, ts, v],
    floor: async (loc: { key: Buffer }, t: number, limit: number) =>
      (rows.get(loc.key.toString()) ?? [])
        .filter((r) => r.validFrom <= t)
        .sort((a, b) => b.validFrom - a.validFrom)
        .slice(0, limit),
  } as unknown as VersionedTableReader;
  const saved: number[] = [];
  const store = new CassandraVersionedStore<string, string>({
    reader,
    streamTimes: { save: async (_s: string, _w: string, st: number) => void saved.push(st) } as unknown as StreamTimeTable,
    storeId: 's',
    writerId: 'p0',
    historyRetentionMs: 100,
    keySerde: stringSerde,
    valueSerde: stringSerde,
    initialStreamTime: 0,
    cleaner: { maxDirtyKeys: 1, concurrency: 4, maxQueued: 100 },
  } as unknown as ConstructorParameters<typeof CassandraVersionedStore<string, string>>[0]);
  return { store, deletes, saved };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
const quiet: RowListener = { rowWritten: () => undefined, rowFailed: () => undefined };

describe('CassandraVersionedStore: clean-up of an evicted key', () => {
  it('deletes only below the persisted horizon (what readers apply), never the live one running ahead of it', async () => {
    const { store, deletes, saved } = storeOnFakeTable();
    store.issue('A', 'a1', 10, quiet);
    store.issue('A', 'a2', 20, quiet);
    await settle();
    // B evicts A (one tracked key at most). Live stream time 500 (horizon 400); persisted still 0 (horizon -100):
    // A@10, valid until 20, is still inside every reader's history.
    store.issue('B', 'b1', 500, quiet);
    await settle();
    expect(saved).toEqual([]);
    expect(deletes).toEqual([]);
    // Once stream time 500 is persisted (a commit), a later eviction cleans below horizon 400.
    await store.flush(500);
    expect(saved).toEqual([500]);
    store.issue('C', 'c1', 501, quiet);
    await settle();
    expect(deletes).toEqual([]); // B's only version is the newest: nothing older to delete
    store.issue('A', 'a3', 502, quiet); // A tracked again, evicting C
    store.issue('D', 'd1', 503, quiet); // evicts A: its versions below 400 are expired
    await settle();
    expect(deletes).toContainEqual({ query: 'DELETE <', key: 'A', bound: 20 });
  });
});
