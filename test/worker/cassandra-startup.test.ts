import { Client, errors } from 'cassandra-driver';
import { ManualClock } from '../../src/clock';
import { AdjunctError } from '../../src/errors';
import { connectCassandraAtStartup, isRetriableAtStartup } from '../../src/worker/cassandra-startup';

/** A driver error of the given class (`name` is what the classification reads) with extra fields. */
function driverError(name: 'OperationTimedOutError' | 'AuthenticationError' | 'ResponseError', extra: Record<string, unknown> = {}): Error {
  const e =
    name === 'OperationTimedOutError'
      ? new errors.OperationTimedOutError('The host 127.0.0.1:9042 did not reply before timeout 12000 ms', '127.0.0.1:9042')
      : name === 'AuthenticationError'
        ? new errors.AuthenticationError('Provided username and/or password are incorrect')
        : new errors.ResponseError(extra.code as number, 'from the server');
  return Object.assign(e, extra);
}

const noHost = (inner: Record<string, Error> = { '127.0.0.1:9042': driverError('OperationTimedOutError') }) =>
  new errors.NoHostAvailableError(inner);

/** A client whose connect() fails with the given errors in turn, then succeeds. */
function fakeClient(failures: unknown[]): { client: Client; connects: () => number } {
  let calls = 0;
  const client = {
    connect: async () => {
      const e = failures[calls++];
      if (e !== undefined) throw e;
    },
  } as unknown as Client;
  return { client, connects: () => calls };
}

describe('connectCassandraAtStartup', () => {
  it('waits for a Cassandra that is not reachable yet: retries with backoff, then prepares once connected', async () => {
    const clock = new ManualClock();
    const { client, connects } = fakeClient([noHost(), noHost(), driverError('OperationTimedOutError')]);
    const retries: number[] = [];
    let prepared = 0;
    const result = await connectCassandraAtStartup(client, async () => ++prepared, {
      clock,
      onRetry: (_e, attempt) => retries.push(attempt),
    });
    expect(result).toBe(1);
    expect(connects()).toBe(4);
    expect(retries).toEqual([1, 2, 3]);
    expect(clock.slept).toBeGreaterThan(0);
  });

  it('retries a retriable failure of the preparation too (keyspace or catalog DDL timing out while Cassandra starts)', async () => {
    const { client } = fakeClient([]);
    let calls = 0;
    const busy = new AdjunctError('creating the catalog: timed out', { code: 'CASSANDRA_UNAVAILABLE', retriable: true });
    const r = await connectCassandraAtStartup(client, async () => (++calls < 3 ? Promise.reject(busy) : 'ready'), {
      clock: new ManualClock(),
    });
    expect(r).toBe('ready');
    expect(calls).toBe(3);
  });

  it('fails with CASSANDRA_UNAVAILABLE naming the last error once the start-up timeout has passed', async () => {
    const clock = new ManualClock();
    const { client, connects } = fakeClient(Array.from({ length: 1000 }, () => noHost()));
    const e = await connectCassandraAtStartup(client, async () => 'never', { clock, timeoutMs: 10_000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AdjunctError);
    expect((e as AdjunctError).code).toBe('CASSANDRA_UNAVAILABLE');
    expect((e as AdjunctError).message).toMatch(
      /^connecting to Cassandra at start-up failed after \d+ attempts in 1\d\.\d s: no Cassandra host answered \(127\.0\.0\.1:9042: OperationTimedOutError\)$/,
    );
    expect(clock.slept).toBeGreaterThanOrEqual(10_000);
    expect(connects()).toBeGreaterThan(5);
  });

  it('fails at once on wrong credentials or a failed TLS handshake (configuration errors) and on a refused statement, without driver internals', async () => {
    const clock = new ManualClock();
    const auth = noHost({ '127.0.0.1:9042': driverError('AuthenticationError') });
    const a = fakeClient([auth]);
    const refused = (await connectCassandraAtStartup(a.client, async () => 'x', { clock }).catch((x: unknown) => x)) as AdjunctError;
    expect(refused).toMatchObject({ code: 'CASSANDRA_ERROR', retriable: false, stage: 'config' });
    expect(refused.message).toBe(
      'connecting to Cassandra at start-up: the login was refused (no Cassandra host answered (127.0.0.1:9042: AuthenticationError))',
    );
    expect(a.connects()).toBe(1);
    // A TLS handshake every host failed (here a self-signed certificate): a setting no wait fixes.
    const tls = Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    const t = fakeClient([noHost({ '127.0.0.1:9042': tls })]);
    const handshake = (await connectCassandraAtStartup(t.client, async () => 'x', { clock }).catch((x: unknown) => x)) as AdjunctError;
    expect(handshake).toMatchObject({ code: 'CASSANDRA_ERROR', retriable: false, stage: 'config' });
    expect(handshake.message).toBe(
      'connecting to Cassandra at start-up: the TLS handshake failed (no Cassandra host answered (127.0.0.1:9042: SELF_SIGNED_CERT_IN_CHAIN))',
    );
    expect(t.connects()).toBe(1);
    const b = fakeClient([driverError('ResponseError', { code: 0x2200 })]);
    const invalid = (await connectCassandraAtStartup(b.client, async () => 'x', { clock }).catch((x: unknown) => x)) as AdjunctError;
    expect(invalid).toMatchObject({
      code: 'CASSANDRA_ERROR',
      retriable: false,
      message: 'connecting to Cassandra at start-up: from the server',
    });
    expect(clock.slept).toBe(0);
  });

  it('stops waiting when the worker is asked to stop: no further attempt after the backoff', async () => {
    const clock = new ManualClock();
    let stop = false;
    const { client, connects } = fakeClient(Array.from({ length: 1000 }, () => noHost()));
    const e = await connectCassandraAtStartup(client, async () => 'x', {
      clock,
      onRetry: (_e, attempt) => (stop = attempt >= 2),
      shouldStop: () => stop,
    }).catch((x: unknown) => x);
    expect(e).toMatchObject({
      code: 'STOPPED_WHILE_STARTING',
      retriable: false,
      message: 'stopped while waiting for Cassandra at start-up',
    });
    expect(connects()).toBe(2);
  });

  it('stops mid-attempt within the poll interval, and shuts down a connection that comes up afterwards', async () => {
    let connected!: () => void;
    let shutdowns = 0;
    const client = {
      connect: () => new Promise<void>((r) => (connected = r)),
      shutdown: async () => void shutdowns++,
    } as unknown as Client;
    const t0 = Date.now();
    let stop = false;
    setTimeout(() => (stop = true), 50);
    const e = await connectCassandraAtStartup(client, async () => 'x', { shouldStop: () => stop }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'STOPPED_WHILE_STARTING', message: 'stopped while waiting for Cassandra at start-up' });
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(shutdowns).toBe(0);
    connected();
    await new Promise((r) => setImmediate(r));
    expect(shutdowns).toBe(1);
  });
});

describe('isRetriableAtStartup', () => {
  it('retries unreachable, timing-out, overloaded and still-starting answers; not a login every host refused', () => {
    expect(isRetriableAtStartup(noHost())).toBe(true);
    expect(isRetriableAtStartup(noHost({}))).toBe(true);
    expect(isRetriableAtStartup(driverError('ResponseError', { code: 0x1001 }))).toBe(true);
    expect(isRetriableAtStartup(noHost({ a: driverError('AuthenticationError'), b: driverError('AuthenticationError') }))).toBe(false);
    expect(isRetriableAtStartup(noHost({ a: driverError('AuthenticationError'), b: driverError('OperationTimedOutError') }))).toBe(true);
    expect(isRetriableAtStartup(driverError('ResponseError', { code: 0x2200 }))).toBe(false);
    // A node still starting cannot read its auth data yet: that refusal is worth waiting out.
    const starting = new errors.AuthenticationError('Unable to perform authentication: Cannot achieve consistency level LOCAL_ONE');
    expect(isRetriableAtStartup(noHost({ a: starting }))).toBe(true);
  });
});
