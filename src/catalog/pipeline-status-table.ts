import { Client, types } from 'cassandra-driver';
import { validateKeyspaceName } from '../store/cassandra';
import { catalogExecute, numberOrNull } from './catalog-cql';

/** Bootstrap/build state of a pipeline generation, as persisted for other processes. */
export type BootstrapState = 'BOOTSTRAPPING' | 'READY' | 'RUNNING' | 'FAILED';

/** One persisted status row. */
export interface PipelineStatusRow {
  pipeline: string;
  generation: number;
  store: string;
  state: BootstrapState;
  recordsDone: number;
  recordsTotal: number;
  endOffsets: Record<string, string>;
  /** Where the generation's group started on each partition when its bootstrap first began (kept by later attempts). */
  startOffsets: Record<string, string>;
  progress: Record<string, string>;
  lastError: string | null;
  worker: string | null;
  updatedAt: Date | null;
}

const num = (v: unknown) => numberOrNull(v) ?? 0;

/** Reads and writes pipeline bootstrap status in Cassandra so readers in other processes can check or wait for READY. */
export class PipelineStatusTable {
  constructor(
    private readonly client: Client,
    private readonly keyspace: string,
  ) {
    validateKeyspaceName(keyspace);
  }

  /**
   * Upserts a status row. READY is also recorded in `ready_at`, which no other state writes: a worker that measured
   * BOOTSTRAPPING just before another measured READY cannot take READY back (a generation never un-readies; its number
   * is never reused).
   */
  async put(row: Omit<PipelineStatusRow, 'updatedAt'>): Promise<void> {
    const [readyAt, readyNow] = row.state === 'READY' ? [', ready_at', ',toTimestamp(now())'] : ['', ''];
    await catalogExecute(
      this.client,
      `INSERT INTO ${this.keyspace}.adjunct_pipeline_status (pipeline, generation, store, state, records_done, records_total, end_offsets, start_offsets, progress, last_error, worker, updated_at${readyAt}) VALUES (?,?,?,?,?,?,?,?,?,?,?,toTimestamp(now())${readyNow})`,
      [
        row.pipeline,
        row.generation,
        row.store,
        row.state,
        types.Long.fromNumber(row.recordsDone),
        types.Long.fromNumber(row.recordsTotal),
        JSON.stringify(row.endOffsets),
        JSON.stringify(row.startOffsets),
        JSON.stringify(row.progress),
        row.lastError,
        row.worker,
      ],
      `writing status of ${row.pipeline}`,
      'bootstrap',
    );
  }

  /** The status of one generation, or the newest one when generation is omitted. */
  async get(pipeline: string, generation?: number): Promise<PipelineStatusRow | null> {
    const rs =
      generation === undefined
        ? await catalogExecute(
            this.client,
            `SELECT * FROM ${this.keyspace}.adjunct_pipeline_status WHERE pipeline=? LIMIT 1`,
            [pipeline],
            `reading status of ${pipeline}`,
            'bootstrap',
          )
        : await catalogExecute(
            this.client,
            `SELECT * FROM ${this.keyspace}.adjunct_pipeline_status WHERE pipeline=? AND generation=?`,
            [pipeline, generation],
            `reading status of ${pipeline}`,
            'bootstrap',
          );
    const r = rs.first();
    return r ? rowToStatus(r) : null;
  }

  /** Every status row (all pipelines, all generations). */
  async list(): Promise<PipelineStatusRow[]> {
    const rs = await catalogExecute(
      this.client,
      `SELECT * FROM ${this.keyspace}.adjunct_pipeline_status`,
      [],
      'listing pipeline status',
      'bootstrap',
    );
    return rs.rows.map(rowToStatus);
  }
}

function rowToStatus(r: types.Row): PipelineStatusRow {
  const parse = (s: string | null) => (s ? JSON.parse(s) : {});
  const ready = r.get('ready_at') != null;
  const total = num(r.get('records_total'));
  return {
    pipeline: r.get('pipeline'),
    generation: num(r.get('generation')),
    store: r.get('store'),
    state: ready ? 'READY' : r.get('state'),
    recordsDone: ready ? total : num(r.get('records_done')),
    recordsTotal: total,
    endOffsets: parse(r.get('end_offsets')),
    startOffsets: parse(r.get('start_offsets')),
    progress: parse(r.get('progress')),
    lastError: r.get('last_error'),
    worker: r.get('worker'),
    updatedAt: r.get('updated_at'),
  };
}
