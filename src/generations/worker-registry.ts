import { Client, types } from 'cassandra-driver';
import { catalogExecute, numberOrNull } from '../catalog/catalog-cql';
import { validateKeyspaceName } from '../store/cassandra';

/** Why a worker writes a generation: the one readers read, or the one a reload builds. */
export type WriterRole = 'current' | 'building';

/** One live worker writing one generation of a pipeline, as its last heartbeat said. */
export interface LiveWriter {
  pipeline: string;
  worker: string;
  generation: number;
  role: WriterRole;
  updatedAt: Date | null;
}

/**
 * Heartbeats of the workers in `adjunct_workers`: each worker upserts (pipeline, worker, generation) with a TTL before
 * it writes a generation and at every catalog poll; a killed worker's rows expire after the TTL. The janitor drops a
 * generation's table only when no row names it.
 */
export class WorkerRegistry {
  constructor(
    private readonly client: Client,
    private readonly keyspace: string,
  ) {
    validateKeyspaceName(keyspace);
  }

  /** Records (or refreshes) that `worker` writes `generation` of `pipeline`, for ttlSeconds. */
  async beat(w: Omit<LiveWriter, 'updatedAt'>, ttlSeconds: number): Promise<void> {
    await catalogExecute(
      this.client,
      `INSERT INTO ${this.keyspace}.adjunct_workers (pipeline, worker, generation, role, updated_at) VALUES (?,?,?,?,toTimestamp(now())) USING TTL ?`,
      [w.pipeline, w.worker, w.generation, w.role, Math.max(1, Math.ceil(ttlSeconds))],
      `heartbeat of worker ${w.worker}`,
      'store',
    );
  }

  /** Forgets that `worker` writes `generation` (it stopped writing it). */
  async forget(pipeline: string, worker: string, generation: number): Promise<void> {
    await catalogExecute(
      this.client,
      `DELETE FROM ${this.keyspace}.adjunct_workers WHERE pipeline=? AND worker=? AND generation=?`,
      [pipeline, worker, generation],
      `unregistering worker ${worker}`,
      'store',
    );
  }

  /** The live writers of a pipeline (rows whose TTL has not expired). */
  async live(pipeline: string): Promise<LiveWriter[]> {
    const rs = await catalogExecute(
      this.client,
      `SELECT * FROM ${this.keyspace}.adjunct_workers WHERE pipeline=?`,
      [pipeline],
      `listing workers of ${pipeline}`,
      'store',
    );
    return rs.rows.map(toWriter);
  }

  /** Every live writer of every pipeline. */
  async all(): Promise<LiveWriter[]> {
    const rs = await catalogExecute(this.client, `SELECT * FROM ${this.keyspace}.adjunct_workers`, [], 'listing workers', 'store');
    return rs.rows.map(toWriter);
  }
}

function toWriter(r: types.Row): LiveWriter {
  return {
    pipeline: r.get('pipeline'),
    worker: r.get('worker'),
    generation: numberOrNull(r.get('generation')) ?? 0,
    role: r.get('role'),
    updatedAt: r.get('updated_at') ?? null,
  };
}
