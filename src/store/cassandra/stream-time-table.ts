import { CqlExecutor, toNumber } from './cql-executor';
import { STREAM_TIME_TABLE } from './layout';

/** Reads and writes a writer's observed stream time in `<keyspace>.adjunct_stream_time`. */
export class StreamTimeTable {
  private readonly selectCql: string;
  private readonly upsertCql: string;
  private readonly selectAllCql: string;

  constructor(
    private readonly exec: CqlExecutor,
    keyspace: string,
  ) {
    this.selectCql = `SELECT stream_time FROM ${keyspace}.${STREAM_TIME_TABLE} WHERE store = ? AND writer = ?`;
    this.selectAllCql = `SELECT writer, stream_time FROM ${keyspace}.${STREAM_TIME_TABLE} WHERE store = ?`;
    this.upsertCql = `INSERT INTO ${keyspace}.${STREAM_TIME_TABLE} (store, writer, stream_time) VALUES (?, ?, ?)`;
  }

  /** The persisted stream time of (store, writer), or -Infinity if none. */
  async load(store: string, writer: string): Promise<number> {
    const rs = await this.exec.read(this.selectCql, [store, writer], 'load stream time');
    const row = rs.first();
    if (!row || row.stream_time === null || row.stream_time === undefined) return Number.NEGATIVE_INFINITY;
    return toNumber(row.stream_time);
  }

  /** Every writer's persisted stream time for a store, skipping writers without one (for readers that need the retention horizon). */
  async loadAll(store: string): Promise<Map<string, number>> {
    const rs = await this.exec.read(this.selectAllCql, [store], 'load stream times');
    const out = new Map<string, number>();
    for (const r of rs.rows) if (r.stream_time !== null && r.stream_time !== undefined) out.set(String(r.writer), toNumber(r.stream_time));
    return out;
  }

  /** Persists the stream time of (store, writer): one write. */
  async save(store: string, writer: string, streamTime: number): Promise<void> {
    await this.exec.write(this.upsertCql, [store, writer, this.exec.long(streamTime)], 'persist stream time');
  }
}
