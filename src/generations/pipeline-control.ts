import { Client } from 'cassandra-driver';
import { catalogExecute } from '../catalog/catalog-cql';
import { validateKeyspaceName } from '../store/cassandra';

/** The persisted pause flag of each pipeline (`adjunct_pipeline_control`), honoured by every worker, also those started later. */
export class PipelineControl {
  constructor(
    private readonly client: Client,
    private readonly keyspace: string,
  ) {
    validateKeyspaceName(keyspace);
  }

  /** Persists whether a pipeline is paused. */
  async setPaused(pipeline: string, paused: boolean): Promise<void> {
    await catalogExecute(
      this.client,
      `INSERT INTO ${this.keyspace}.adjunct_pipeline_control (pipeline, paused, updated_at) VALUES (?,?,toTimestamp(now()))`,
      [pipeline, paused],
      `${paused ? 'pausing' : 'resuming'} ${pipeline}`,
      'store',
    );
  }

  /** True when the pipeline is persisted as paused. */
  async isPaused(pipeline: string): Promise<boolean> {
    const rs = await catalogExecute(
      this.client,
      `SELECT paused FROM ${this.keyspace}.adjunct_pipeline_control WHERE pipeline=?`,
      [pipeline],
      `reading the pause flag of ${pipeline}`,
      'store',
    );
    return rs.first()?.get('paused') === true;
  }
}
