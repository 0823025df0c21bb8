import { KafkaJSConnectionError, KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError } from 'kafkajs';
import { ManualClock } from '../../src/clock';
import { AdjunctError, isStoppedWhileStarting } from '../../src/errors';
import { isRetriableKafkaError, withKafkaRetry, withKafkaTimeout } from '../../src/kafka/kafka-retry';
import { protocolError } from './protocol-error';

describe('Kafka retry classification', () => {
  it('the coordinator errors of a fresh or moving coordinator are retriable (codes 14, 15, 16)', () => {
    expect(isRetriableKafkaError(protocolError('GROUP_LOAD_IN_PROGRESS', 14))).toBe(true);
    expect(isRetriableKafkaError(protocolError('GROUP_COORDINATOR_NOT_AVAILABLE', 15))).toBe(true);
    expect(isRetriableKafkaError(protocolError('NOT_COORDINATOR_FOR_GROUP', 16))).toBe(true);
    expect(
      isRetriableKafkaError(
        new (KafkaJSGroupCoordinatorNotFound as unknown as new (m: string) => Error)('Failed to find group coordinator'),
      ),
    ).toBe(true);
    expect(isRetriableKafkaError(new KafkaJSConnectionError('Connection refused'))).toBe(true);
  });

  it("kafkajs's own retries giving up on a coordinator error is still retriable; authorization and plain errors are not", () => {
    const gaveUp = new KafkaJSNonRetriableError('retries exceeded');
    (gaveUp as unknown as { originalError: Error }).originalError = protocolError('NOT_COORDINATOR_FOR_GROUP', 16);
    expect(isRetriableKafkaError(gaveUp)).toBe(true);
    expect(isRetriableKafkaError(protocolError('GROUP_AUTHORIZATION_FAILED', 30, false))).toBe(false);
    expect(isRetriableKafkaError(new Error('boom'))).toBe(false);
    expect(isRetriableKafkaError('NOT_COORDINATOR_FOR_GROUP')).toBe(false);
  });
});

describe('withKafkaRetry', () => {
  it('retries a coordinator error with backoff until the call succeeds', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const retries: number[] = [];
    const out = await withKafkaRetry(
      'fetching offsets',
      async () => {
        if (++calls <= 2) throw protocolError('NOT_COORDINATOR_FOR_GROUP', 16);
        return 'ok';
      },
      { clock, onRetry: (_e, attempt) => retries.push(attempt) },
    );
    expect(out).toBe('ok');
    expect(calls).toBe(3);
    expect(retries).toEqual([1, 2]);
    expect(clock.slept).toBeGreaterThan(0);
  });

  it('ends after the failed attempt once shouldStop says so (a stop during the start), long before the bound', async () => {
    const clock = new ManualClock();
    let calls = 0;
    let stopping = false;
    const err = await withKafkaRetry(
      'the start-up offset check',
      async () => {
        if (++calls === 2) stopping = true;
        throw protocolError('GROUP_LOAD_IN_PROGRESS', 14);
      },
      { clock, timeoutMs: 60_000, shouldStop: () => stopping },
    ).catch((e: unknown) => e);
    // The stop's own error, not KAFKA_UNAVAILABLE: the worker's fatal path ignores it while stopping.
    expect(err).toMatchObject({ code: 'STOPPED_WHILE_STARTING', message: 'stopped while the start-up offset check' });
    expect(isStoppedWhileStarting(new AdjunctError('reload failed', { code: 'RELOAD_FAILED', cause: err }))).toBe(true);
    expect(isStoppedWhileStarting(new AdjunctError('reload failed', { code: 'RELOAD_FAILED' }))).toBe(false);
    expect(calls).toBe(2);
    expect(clock.slept).toBeLessThan(60_000);
  });

  it('fails with KAFKA_UNAVAILABLE naming the operation and the last error once the bound is reached', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const err = await withKafkaRetry(
      'fetching the committed offsets of group g',
      async () => {
        calls++;
        throw protocolError('GROUP_LOAD_IN_PROGRESS', 14);
      },
      { clock, timeoutMs: 10_000 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdjunctError);
    expect(err).toMatchObject({ code: 'KAFKA_UNAVAILABLE', retriable: true });
    expect((err as Error).message).toMatch(
      /^fetching the committed offsets of group g failed, Kafka unavailable: gave up after \d+ attempts/,
    );
    expect((err as Error).message).toMatch(/GROUP_LOAD_IN_PROGRESS from the broker/);
    expect(calls).toBeGreaterThan(2);
    expect(clock.slept).toBeLessThanOrEqual(10_000);
  });

  it('throws a non-retriable error at once', async () => {
    let calls = 0;
    const denied = protocolError('GROUP_AUTHORIZATION_FAILED', 30, false);
    await expect(
      withKafkaRetry('x', async () => {
        calls++;
        throw denied;
      }),
    ).rejects.toBe(denied);
    expect(calls).toBe(1);
  });
});

describe('withKafkaTimeout', () => {
  it('gives the answer of a call that answers, and KAFKA_UNAVAILABLE for one that never does', async () => {
    expect(await withKafkaTimeout('the log offsets of t/0', Promise.resolve(5), 50)).toBe(5);
    await expect(withKafkaTimeout('the log offsets of t/0', new Promise<never>(() => undefined), 20)).rejects.toMatchObject({
      code: 'KAFKA_UNAVAILABLE',
      message: 'the log offsets of t/0 did not answer within 20 ms',
    });
  });
});
