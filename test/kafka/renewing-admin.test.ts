/** renewingAdmin: a request failing with UNKNOWN_TOPIC_OR_PARTITION is sent once more on a fresh admin; other failures are not. */
import type { Admin } from 'kafkajs';
import { ADMIN_RENEWAL_MIN_INTERVAL_MS, isUnknownTopic, renewingAdmin } from '../../src/kafka/renewing-admin';
import { createLogger } from '../../src/observability/logger';

/** kafkajs's protocol error for a topic the broker does not host. */
const unknownTopic = () =>
  Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION', retriable: true });

/** A fake admin whose listTopics answers or throws what `answer` says; it records its calls. */
function fakeAdmin(name: string, answer: () => Promise<string[]>) {
  const calls: string[] = [];
  const admin = {
    connect: async () => void calls.push('connect'),
    disconnect: async () => void calls.push('disconnect'),
    listTopics: async () => {
      calls.push('listTopics');
      return answer();
    },
    name,
  } as unknown as Admin & { name: string };
  return { admin, calls };
}

describe('renewingAdmin', () => {
  it('a request met by UNKNOWN_TOPIC_OR_PARTITION (a deleted topic kafkajs still refreshes) is answered by a fresh, connected admin', async () => {
    const poisoned = fakeAdmin('first', () => Promise.reject(unknownTopic()));
    const fresh = fakeAdmin('second', async () => ['a']);
    let created = 0;
    const admin = renewingAdmin(poisoned.admin, {
      create: () => (created++, fresh.admin),
      connect: (a) => a.connect(),
      log: createLogger('silent'),
    });
    await expect(admin.listTopics()).resolves.toEqual(['a']);
    expect({ created, first: poisoned.calls, second: fresh.calls }).toEqual({
      created: 1,
      first: ['listTopics', 'disconnect'],
      second: ['connect', 'listTopics'],
    });
    // Later requests go to the fresh admin; disconnect too.
    await admin.listTopics();
    await admin.disconnect();
    expect(fresh.calls).toEqual(['connect', 'listTopics', 'listTopics', 'disconnect']);
  });

  it('other failures are returned as they are, with no renewal', async () => {
    const failing = fakeAdmin('first', () => Promise.reject(new Error('Connection timeout')));
    let created = 0;
    const admin = renewingAdmin(failing.admin, {
      create: () => (created++, failing.admin),
      connect: async () => undefined,
      log: createLogger('silent'),
    });
    await expect(admin.listTopics()).rejects.toThrow('Connection timeout');
    expect(created).toBe(0);
  });

  it('renews at most once per interval: a request naming the missing topic itself fails again and its error is returned', async () => {
    let t = 0;
    const made: ReturnType<typeof fakeAdmin>[] = [];
    const create = () => {
      const f = fakeAdmin(`#${made.length}`, () => Promise.reject(unknownTopic()));
      made.push(f);
      return f.admin;
    };
    const admin = renewingAdmin(create(), { create, connect: async () => undefined, log: createLogger('silent'), now: () => t });
    await expect(admin.listTopics()).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' });
    await expect(admin.listTopics()).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(made).toHaveLength(2); // the first and one renewal
    t += ADMIN_RENEWAL_MIN_INTERVAL_MS;
    await expect(admin.listTopics()).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(made).toHaveLength(3);
  });

  it('finds the error inside what wraps it (a retrier giving up, an AdjunctError cause)', () => {
    const wrapped = Object.assign(new Error('gave up after 1 attempts'), { cause: unknownTopic() });
    expect([isUnknownTopic(wrapped), isUnknownTopic(new Error('x'))]).toEqual([true, false]);
  });
  it('a disconnect during a renewal also closes the admin the renewal connects', async () => {
    const poisoned = fakeAdmin('first', () => Promise.reject(unknownTopic()));
    const fresh = fakeAdmin('second', async () => ['a']);
    let connected!: () => void;
    const admin = renewingAdmin(poisoned.admin, {
      create: () => fresh.admin,
      connect: (a) => new Promise<void>((r) => (connected = r)).then(() => a.connect()),
      log: createLogger('silent'),
    });
    const request = admin.listTopics();
    await new Promise((r) => setImmediate(r)); // the renewal is connecting the fresh admin
    const closing = admin.disconnect();
    connected();
    await closing;
    // The request is not sent again on an admin closed under it (kafkajs would connect it again): its failure is returned.
    await expect(request).rejects.toThrow('does not host');
    expect(fresh.calls).toEqual(['connect', 'disconnect']);
  });

  it('no request or renewal starts after a disconnect (kafkajs would connect the closed admin again)', async () => {
    const poisoned = fakeAdmin('first', () => Promise.reject(unknownTopic()));
    let created = 0;
    const admin = renewingAdmin(poisoned.admin, {
      create: () => (created++, fakeAdmin('second', async () => []).admin),
      connect: (a) => a.connect(),
      log: createLogger('silent'),
    });
    await admin.disconnect();
    await expect(admin.listTopics()).rejects.toMatchObject({ code: 'KAFKA_UNAVAILABLE', message: expect.stringContaining('closed') });
    expect({ created, calls: poisoned.calls }).toEqual({ created: 0, calls: ['disconnect'] });
  });

  it('a replaced admin is closed again once its last request in flight settles (kafkajs retries it by reconnecting)', async () => {
    let answerSlow!: (topics: string[]) => void;
    let calls = 0;
    const poisoned = fakeAdmin('first', () =>
      ++calls === 1 ? new Promise<string[]>((r) => (answerSlow = r)) : Promise.reject(unknownTopic()),
    );
    const fresh = fakeAdmin('second', async () => ['a']);
    const admin = renewingAdmin(poisoned.admin, { create: () => fresh.admin, connect: (a) => a.connect(), log: createLogger('silent') });
    const slow = admin.listTopics(); // in flight on the first admin (in kafkajs's retries) while it is replaced
    await expect(admin.listTopics()).resolves.toEqual(['a']); // met the deleted topic: answered by the fresh admin
    expect(poisoned.calls).toEqual(['listTopics', 'listTopics', 'disconnect']);
    answerSlow(['b']);
    await expect(slow).resolves.toEqual(['b']);
    await new Promise((r) => setImmediate(r));
    // Its retries may have connected it again: closed once more after its last request.
    expect(poisoned.calls).toEqual(['listTopics', 'listTopics', 'disconnect', 'disconnect']);
    expect(fresh.calls).toEqual(['connect', 'listTopics']);
  });
});
