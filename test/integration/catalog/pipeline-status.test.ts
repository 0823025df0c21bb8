/**
 * The persisted bootstrap status against the real Cassandra: READY, once written for a generation, is never taken back
 * by a worker that measured BOOTSTRAPPING just before (its write lands after the READY one), and a catalog created by
 * an earlier release gets the `ready_at` column by ALTER TABLE.
 */
import { ensureCatalog, PipelineStatusRow, PipelineStatusTable } from '../../../src/catalog';
import { createKeyspace, uniqueName } from '../helpers';
import { useCatalogKeyspace } from './catalog-fixture';

const row = (state: PipelineStatusRow['state'], done: number, worker: string): Omit<PipelineStatusRow, 'updatedAt'> => ({
  pipeline: 'p',
  generation: 1,
  store: 's',
  state,
  recordsDone: done,
  recordsTotal: 100,
  endOffsets: { 't:0': '100' },
  startOffsets: { 't:0': '0' },
  progress: { 't:0': String(done) },
  lastError: null,
  worker,
});

describe('pipeline status: READY is never taken back', () => {
  const ks = useCatalogKeyspace('status_ready');
  const keyspace = ks.keyspace;

  it('a BOOTSTRAPPING written after READY (another worker, measured earlier) still reads READY, with every record done', async () => {
    const client = ks.client();
    const status = new PipelineStatusTable(client, keyspace);
    await status.put(row('BOOTSTRAPPING', 10, 'a'));
    expect((await status.get('p', 1))?.state).toBe('BOOTSTRAPPING');
    await status.put(row('READY', 100, 'a'));
    await status.put(row('BOOTSTRAPPING', 90, 'b'));
    const got = await status.get('p', 1);
    expect(got).toMatchObject({ state: 'READY', recordsDone: 100, recordsTotal: 100 });
    expect((await status.list()).map((r) => r.state)).toEqual(['READY']);
  });

  it('a catalog from an earlier release (no ready_at) gets the column and keeps its rows', async () => {
    const client = ks.client();
    const old = uniqueName('status_old');
    await createKeyspace(client, old);
    try {
      await client.execute(
        `CREATE TABLE ${old}.adjunct_pipeline_status (pipeline text, generation int, store text, state text, records_done bigint, records_total bigint, end_offsets text, start_offsets text, progress text, last_error text, worker text, updated_at timestamp, PRIMARY KEY ((pipeline), generation)) WITH CLUSTERING ORDER BY (generation DESC)`,
      );
      await client.execute(
        `INSERT INTO ${old}.adjunct_pipeline_status (pipeline, generation, state, records_total) VALUES ('p', 1, 'READY', 5)`,
      );
      await ensureCatalog(client, old);
      const status = new PipelineStatusTable(client, old);
      expect((await status.get('p', 1))?.state).toBe('READY');
      await status.put({ ...row('READY', 100, 'a'), generation: 2 });
      await status.put({ ...row('BOOTSTRAPPING', 1, 'b'), generation: 2 });
      expect((await status.get('p', 2))?.state).toBe('READY');
    } finally {
      await client.execute(`DROP KEYSPACE IF EXISTS ${old}`);
    }
  });
});
