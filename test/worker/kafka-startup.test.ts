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
import { connectKafkaAtStartup, isRetriableAtKafkaStartup, kafkaErrorText } from '../../src/worker/kafka-startup';

/** kafkajs's error classes take (message or error, details) at run time; their typings declare fewer arguments. */
type Loose = new (...args: unknown[]) => Error;
const saslRefused = (m: string) => new (KafkaJSSASLAuthenticationError as unknown as Loose)(m);
const timeout = () => new KafkaJSRequestTimeoutError('Request ApiVersions(key: 18, version: 2) timed out', {} as never);
const refused = () =>
  new (KafkaJSConnectionError as unknown as Loose)('Connection error: connect ECONNREFUSED 127.0.0.1:9092', {
    code: 'ECONNREFUSED',
  });
const badCertificate = () =>
  new (KafkaJSConnectionError as unknown as Loose)('Connection error: self-signed certificate in certificate chain', {
    code: 'SELF_SIGNED_CERT_IN_CHAIN',
  });
const gaveUp = (e: Error) => new KafkaJSNumberOfRetriesExceeded(e, { retryCount: 0, retryTime: 300 });

/** Admin clients whose connect() or describeCluster() fails with the given errors in turn; counts per client. */
class FakeAdmins {
  made = 0;
  connects = 0;
  describes = 0;
  disconnects = 0;
  constructor(
    private readonly failures: unknown[],
    private readonly failDescribe = false,
  ) {}
  admin(): Admin {
    this.made++;
    return {
      connect: async () => {
        this.connects++;
        const e = this.failDescribe ? undefined : this.failures.shift();
        if (e !== undefined) throw e;
      },
      describeCluster: async () => {
        this.describes++;
        const e = this.failDescribe ? this.failures.shift() : undefined;
        if (e !== undefined) throw e;
        return { brokers: [], controller: 1, clusterId: 'c' };
      },
      disconnect: async () => void this.disconnects++,
    } as unknown as Admin;
  }
}

describe('connectKafkaAtStartup', () => {
  it("retries kafkajs's TypeError from describeCluster (a metadata answer emptied by a leader election, seen after a broker's resume)", async () => {
    const clock = new ManualClock();
    // What kafkajs 2.2 throws with retries 0 when the metadata request meets LEADER_NOT_AVAILABLE.
    const emptied = new TypeError("Cannot destructure property 'brokers' of '(intermediate value)' as it is null.");
    const probes = new FakeAdmins([emptied], true);
    const real = new FakeAdmins([]);
    const retries: string[] = [];
    await connectKafkaAtStartup(real.admin(), () => probes.admin(), { clock, onRetry: (e) => retries.push(kafkaErrorText(e)) });
    expect({ probes: probes.made, realConnects: real.connects }).toEqual({ probes: 2, realConnects: 1 });
    // The warning names the innermost error, kafkajs's own.
    expect(retries).toEqual(["TypeError: Cannot destructure property 'brokers' of '(intermediate value)' as it is null."]);
  });

  it('probes with a fresh one-try client per attempt until a broker answers, then connects the admin once', async () => {
    const clock = new ManualClock();
    const probes = new FakeAdmins([refused(), timeout(), new Error('Broker not connected')]);
    const real = new FakeAdmins([]);
    const retries: string[] = [];
    await connectKafkaAtStartup(real.admin(), () => probes.admin(), {
      clock,
      onRetry: (e, attempt) => retries.push(`${attempt} ${kafkaErrorText(e)}`),
    });
    expect({ probes: probes.made, probeConnects: probes.connects, realConnects: real.connects, realDescribes: real.describes }).toEqual({
      probes: 4,
      probeConnects: 4,
      realConnects: 1,
      realDescribes: 1,
    });
    // Every probe is disconnected (the failed ones once their connect settled, the last one after it answered).
    await new Promise((r) => setImmediate(r));
    expect(probes.disconnects).toBeGreaterThanOrEqual(4);
    expect(real.disconnects).toBe(0);
    expect(retries).toEqual([
      '1 KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127.0.0.1:9092',
      '2 KafkaJSRequestTimeoutError: Request ApiVersions(key: 18, version: 2) timed out',
      '3 Error: Broker not connected',
    ]);
    expect(clock.slept).toBeGreaterThan(0);
  });

  it('retries a broker list that cannot be loaded yet, judged by what kafkajs gave up on', async () => {
    const probes = new FakeAdmins([gaveUp(timeout())], true);
    await connectKafkaAtStartup(new FakeAdmins([]).admin(), () => probes.admin(), { clock: new ManualClock() });
    expect({ made: probes.made, describes: probes.describes }).toEqual({ made: 2, describes: 2 });
  });

  it('fails with KAFKA_UNAVAILABLE (exit 4) naming the last error once the start-up timeout has passed', async () => {
    const clock = new ManualClock();
    const probes = new FakeAdmins(Array.from({ length: 1000 }, () => gaveUp(refused())));
    const real = new FakeAdmins([]);
    const e = (await connectKafkaAtStartup(real.admin(), () => probes.admin(), { clock, timeoutMs: 10_000 }).catch(
      (x: unknown) => x,
    )) as AdjunctError;
    expect(e).toBeInstanceOf(AdjunctError);
    expect(e.code).toBe('KAFKA_UNAVAILABLE');
    expect(e.message).toMatch(
      /^connecting to Kafka at start-up failed after \d+ attempts in 1\d\.\d s: KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127\.0\.0\.1:9092$/,
    );
    expect(exitCodeOfError(e)).toBe(4);
    expect(clock.slept).toBeGreaterThanOrEqual(10_000);
    expect(probes.made).toBeGreaterThan(5);
    expect(real.connects).toBe(0);
  });

  it('fails at once on a refused login or a failed TLS handshake (configuration errors, exit 2), and on any other failure', async () => {
    const clock = new ManualClock();
    const cases: [unknown, RegExp][] = [
      [
        saslRefused('SASL PLAIN authentication failed: Authentication failed'),
        /: the login was refused \(KafkaJSSASLAuthenticationError: /,
      ],
      [gaveUp(badCertificate()), /: the TLS handshake failed \(KafkaJSConnectionError: Connection error: self-signed certificate/],
    ];
    for (const [failure, message] of cases) {
      const probes = new FakeAdmins([failure]);
      const e = (await connectKafkaAtStartup(new FakeAdmins([]).admin(), () => probes.admin(), { clock }).catch(
        (x: unknown) => x,
      )) as AdjunctError;
      expect(e).toMatchObject({ code: 'CONFIG_INVALID', stage: 'config' });
      expect(e.message).toMatch(message);
      expect(exitCodeOfError(e)).toBe(2);
      expect(probes.made).toBe(1);
    }
    const probes = new FakeAdmins([new TypeError('brokers must be an array')]);
    const other = (await connectKafkaAtStartup(new FakeAdmins([]).admin(), () => probes.admin(), { clock }).catch(
      (x: unknown) => x,
    )) as AdjunctError;
    expect(other).toMatchObject({ code: 'WORKER_FAILED', message: 'connecting to Kafka at start-up: TypeError: brokers must be an array' });
    expect(clock.slept).toBe(0);
  });

  it('stops mid-attempt within the poll interval, and disconnects the probe again once its connect settles', async () => {
    let connected!: () => void;
    let disconnects = 0;
    const probe = {
      connect: () => new Promise<void>((r) => (connected = r)),
      describeCluster: async () => ({}),
      disconnect: async () => void disconnects++,
    } as unknown as Admin;
    let stop = false;
    setTimeout(() => (stop = true), 50);
    const t0 = Date.now();
    const e = await connectKafkaAtStartup(new FakeAdmins([]).admin(), () => probe, { shouldStop: () => stop }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'STOPPED_WHILE_STARTING', retriable: false, message: 'stopped while waiting for Kafka at start-up' });
    expect(Date.now() - t0).toBeLessThan(1000);
    const before = disconnects;
    expect(before).toBe(1);
    // kafkajs's connect goes on after a disconnect and may still come up: it is closed once more when it does.
    connected();
    await new Promise((r) => setImmediate(r));
    expect(disconnects).toBe(before + 1);
  });
});

describe('isRetriableAtKafkaStartup', () => {
  it('retries unreachable and unanswering brokers and coordinators not ready; never a refused login or a TLS failure', () => {
    expect(isRetriableAtKafkaStartup(refused())).toBe(true);
    expect(isRetriableAtKafkaStartup(timeout())).toBe(true);
    expect(isRetriableAtKafkaStartup(new Error('Broker not connected'))).toBe(true);
    expect(isRetriableAtKafkaStartup(gaveUp(refused()))).toBe(true);
    expect(
      isRetriableAtKafkaStartup(
        new (KafkaJSProtocolError as unknown as Loose)({ message: 'loading', type: 'GROUP_LOAD_IN_PROGRESS', code: 14, retriable: true }),
      ),
    ).toBe(true);
    expect(isRetriableAtKafkaStartup(saslRefused('SASL failed'))).toBe(false);
    expect(isRetriableAtKafkaStartup(badCertificate())).toBe(false);
    expect(isRetriableAtKafkaStartup(gaveUp(badCertificate()))).toBe(false);
    expect(isRetriableAtKafkaStartup(gaveUp(new Error('something else')))).toBe(false);
    expect(isRetriableAtKafkaStartup(new Error('something else'))).toBe(false);
    expect(isRetriableAtKafkaStartup('Broker not connected')).toBe(false);
  });
});
