import { Client, types } from 'cassandra-driver';
import { ErrorStage, StoreError, wrapCassandraError } from '../errors';
import { toNumber } from '../store/cassandra';
import { awaitSchemaAgreement } from '../store/cassandra';

/** Executes a prepared catalog statement at LOCAL_QUORUM (LOCAL_SERIAL for its LWTs); failures become classified StoreErrors. */
export async function catalogExecute(
  client: Client,
  cql: string,
  params: unknown[],
  what: string,
  stage: ErrorStage,
): Promise<types.ResultSet> {
  try {
    return await client.execute(cql, params, {
      prepare: true,
      consistency: types.consistencies.localQuorum,
      serialConsistency: types.consistencies.localSerial,
    });
  } catch (e) {
    throw wrapCassandraError(e, what, stage);
  }
}

/** A nullable numeric cell (int, or bigint as Long) as a number, or null. */
export function numberOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : toNumber(v);
}

/** Waits (bounded) until all nodes agree on the schema and fails otherwise, so concurrent creators never race. */
export async function requireSchemaAgreement(client: Client, what: string, timeoutMs = 30_000): Promise<void> {
  if (!(await awaitSchemaAgreement(client, timeoutMs))) {
    throw new StoreError(`no schema agreement after ${what}`, { code: 'SCHEMA_DISAGREEMENT', retriable: true, stage: 'schema' });
  }
}
