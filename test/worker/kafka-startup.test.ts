import {
  Admin,
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
} from 'kafkajs';
import { ManualClock } from '../../src/clock';
import { AdjunctError } from '../../src/errors';
import { exitCodeOfError } from '../../src/cli/exit-codes';
import { connectKafkaAtStartup, isRetriableAtKafkaStartup } from '../../src/worker/kafka-startup';

/** An admin whose connect() (or describeCluster()) fails with the given errors in turn, then succeeds; it counts calls. */
function fakeAdmin(failures: unknown[], o: { failDescribe?: boolean } = {}) {
  let connects = 0;
  let describes = 0;
  let disconnects = 0;
  const next = () => failures.shift();
  const admin = {
    connect: async () => {
      connects++;
      const e = o.failDescribe ? undefined : next();
      if (e !== undefined) throw e;
    },
    describeCluster: async () => {
      describes++;
      const e = o.failDescribe ? next() : undefined;
      if (e !== undefined) throw e;
      return { brokers: [], controller: 1, clusterId: 'c' };
    },
    disconnect: async () => void disconnects++,
  } as unknown as Admin;
  return { admin, counts: () => ({ connects, describes, disconnects }) };
}

/** kafkajs's error classes take (message or error, details) at run time; their typings declare fewer arguments. */
type Loose = new (...args: unknown[]) => Error;
const saslRefused = (m: string) => new (KafkaJSSASLAuthenticationError as unknown as Loose)(m);
const timeout = () => new KafkaJSRequestTimeoutError('Request ApiVersions(key: 18, version: 2) timed out', {} as never);
const refused = () => new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092');

describe('connectKafkaAtStartup', () => {
  it('waits for a broker that is not reachable yet: retries with backoff, closing each failed attempt', async () => {
    const clock = new ManualClock();
    const { admin, counts } = fakeAdmin([refused(), timeout(), new Error('Broker not connected')]);
    const retries: number[] = [];
    await connectKafkaAtStartup(admin, { clock, onRetry: (_e, attempt) => retries.push(attempt) });
    expect(counts()).toEqual({ connects: 4, describes: 1, disconnects: 3 });
    expect(retries).toEqual([1, 2, 3]);
    expect(clock.slept).toBeGreaterThan(0);
  });

  it('retries a broker list that cannot be loaded yet (describeCluster after the connection)', async () => {
    const { admin, counts } = fakeAdmin([new KafkaJSNumberOfRetriesExceeded(timeout(), { retryCount: 5, retryTime: 1000 })], {
      failDescribe: true,
    });
    await connectKafkaAtStartup(admin, { clock: new ManualClock() });
    expect(counts()).toMatchObject({ connects: 2, describes: 2 });
  });

  it('fails with KAFKA_UNAVAILABLE (exit 4) naming the last error once the start-up timeout has passed', async () => {
    const clock = new ManualClock();
    const { admin, counts } = fakeAdmin(Array.from({ length: 1000 }, refused));
    const e = (await connectKafkaAtStartup(admin, { clock, timeoutMs: 10_000 }).catch((x: unknown) => x)) as AdjunctError;
    expect(e).toBeInstanceOf(AdjunctError);
    expect(e.code).toBe('KAFKA_UNAVAILABLE');
    expect(e.message).toMatch(
      /^connecting to Kafka at start-up failed after \d+ attempts in 1\d\.\d s: KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127\.0\.0\.1:9092$/,
    );
    expect(exitCodeOfError(e)).toBe(4);
    expect(clock.slept).toBeGreaterThanOrEqual(10_000);
    expect(counts().connects).toBeGreaterThan(5);
  });

  it('fails at once on a refused login (a configuration error, exit 2) and on any other failure', async () => {
    const clock = new ManualClock();
    const a = fakeAdmin([saslRefused('SASL PLAIN authentication failed: Authentication failed')]);
    const login = (await connectKafkaAtStartup(a.admin, { clock }).catch((x: unknown) => x)) as AdjunctError;
    expect(login).toMatchObject({ code: 'KAFKA_UNAVAILABLE', retriable: false, stage: 'config' });
    expect(login.message).toBe(
      'connecting to Kafka at start-up: the login was refused (KafkaJSSASLAuthenticationError: SASL PLAIN authentication failed: Authentication failed)',
    );
    expect(exitCodeOfError(login)).toBe(2);
    expect(a.counts().connects).toBe(1);
    const b = fakeAdmin([new TypeError('brokers must be an array')]);
    const other = (await connectKafkaAtStartup(b.admin, { clock }).catch((x: unknown) => x)) as AdjunctError;
    expect(other).toMatchObject({ code: 'WORKER_FAILED', message: 'connecting to Kafka at start-up: TypeError: brokers must be an array' });
    expect(clock.slept).toBe(0);
  });

  it('stops mid-attempt within the poll interval (STOPPED_WHILE_STARTING) and disconnects the admin client', async () => {
    let disconnects = 0;
    const admin = {
      connect: () => new Promise<void>(() => undefined),
      describeCluster: async () => ({}),
      disconnect: async () => void disconnects++,
    } as unknown as Admin;
    let stop = false;
    setTimeout(() => (stop = true), 50);
    const t0 = Date.now();
    const e = await connectKafkaAtStartup(admin, { shouldStop: () => stop }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'STOPPED_WHILE_STARTING', retriable: false, message: 'stopped while waiting for Kafka at start-up' });
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(disconnects).toBeGreaterThanOrEqual(1);
  });
});

describe('isRetriableAtKafkaStartup', () => {
  it('retries unreachable and unanswering brokers and coordinators not ready; never a refused login', () => {
    expect(isRetriableAtKafkaStartup(refused())).toBe(true);
    expect(isRetriableAtKafkaStartup(timeout())).toBe(true);
    expect(isRetriableAtKafkaStartup(new Error('Broker not connected'))).toBe(true);
    expect(isRetriableAtKafkaStartup(new KafkaJSNumberOfRetriesExceeded(refused(), { retryCount: 5, retryTime: 1 }))).toBe(true);
    expect(
      isRetriableAtKafkaStartup(
        new (KafkaJSProtocolError as unknown as Loose)({ message: 'loading', type: 'GROUP_LOAD_IN_PROGRESS', code: 14, retriable: true }),
      ),
    ).toBe(true);
    expect(isRetriableAtKafkaStartup(saslRefused('SASL failed'))).toBe(false);
    expect(isRetriableAtKafkaStartup(new Error('something else'))).toBe(false);
    expect(isRetriableAtKafkaStartup('Broker not connected')).toBe(false);
  });
});
