/** awaitUsable: a probe that names a schema object the coordinator does not know yet is retried; other errors are not. */
import type { Client } from 'cassandra-driver';
import { isRecordFailure } from '../../../src/errors';
import { awaitTableUsable, awaitUsable, CqlExecutor } from '../../../src/store/cassandra';

/** A client whose execute fails with the given messages in turn (as the driver's InvalidRequest, code 0x2200), then succeeds; it counts the calls. */
function failingClient(messages: string[]): { client: Client; calls: () => number } {
  let n = 0;
  const client = {
    execute: async () => {
      const m = messages[n++];
      if (m !== undefined) throw Object.assign(new Error(m), { code: 0x2200 });
      return { rows: [], rowLength: 0 };
    },
  } as unknown as Client;
  return { client, calls: () => n };
}

describe('awaitUsable', () => {
  it('retries while the coordinator does not know the table or column yet, then returns', async () => {
    const { client, calls } = failingClient([
      'table ks.adjunct_table_owners does not exist',
      'unconfigured table adjunct_table_owners',
      'Undefined column name price',
    ]);
    await awaitUsable(new CqlExecutor(client), 'SELECT price FROM ks.t LIMIT 1', 'probe');
    expect(calls()).toBe(4);
  });

  it('with the sink retry policy, an unknown table or column is waited for by the probe alone: never reported as a store failure', async () => {
    // The worker's policy retries every failure that is not the record's own.
    const policy = (onRetry: (e: unknown) => void) => ({
      timeoutMs: 5_000,
      maxDelayMs: 10,
      isRetriable: (e: unknown) => !isRecordFailure(e),
      onRetry,
    });
    const { client, calls } = failingClient(['table ks.t does not exist', 'unconfigured table t', 'Undefined column name price']);
    const retried: unknown[] = [];
    await awaitUsable(new CqlExecutor(client, { retry: policy((e) => retried.push(e)) }), 'SELECT price FROM ks.t LIMIT 1', 'probe');
    expect({ calls: calls(), retried }).toEqual({ calls: 4, retried: [] });
    // The same answer to an ordinary read is retried through the policy (a write's table dropped under it).
    const other = failingClient(['table ks.t does not exist']);
    const seen: unknown[] = [];
    await new CqlExecutor(other.client, { retry: policy((e) => seen.push(e)) }).read('SELECT 1', [], 'read');
    expect({ calls: other.calls(), retried: seen.length }).toEqual({ calls: 2, retried: 1 });
  });

  it("retries while the replica's store of a table just created is not open yet (a server error naming an unknown CF)", async () => {
    let n = 0;
    const client = {
      execute: async () => {
        // Cassandra's answer in this window: ServerError (code 0x0000) from the read path.
        if (n++ === 0)
          throw Object.assign(new Error('java.lang.IllegalArgumentException: Unknown CF bed4c660-f14c-11f1-aed4-6db08443c632'), {
            code: 0,
          });
        return { rows: [], rowLength: 0 };
      },
    } as unknown as Client;
    await awaitUsable(new CqlExecutor(client), 'SELECT * FROM ks.t LIMIT 1', 'probe');
    expect(n).toBe(2);
  });

  it('rethrows any other error at once', async () => {
    const { client, calls } = failingClient(['Cannot achieve consistency level LOCAL_QUORUM']);
    await expect(awaitUsable(new CqlExecutor(client), 'SELECT * FROM ks.t LIMIT 1', 'probe')).rejects.toThrow(/probe/);
    expect(calls()).toBe(1);
  });

  it('probes a table once per client', async () => {
    const { client, calls } = failingClient(['table ks.t does not exist']);
    const exec = new CqlExecutor(client);
    await awaitTableUsable(exec, { keyspace: 'ks', table: 't' });
    await awaitTableUsable(exec, { keyspace: 'ks', table: 't' });
    expect(calls()).toBe(2);
    await awaitTableUsable(exec, { keyspace: 'ks', table: 'u' });
    expect(calls()).toBe(3);
  });
});
