import type { Admin } from 'kafkajs';
import { createLogger } from '../../src/observability/logger';
import { TopicSubscription } from '../../src/worker/topic-subscription';

/** A subscription over an admin whose topic list the test sets (a listing that throws when `down`). */
function subscription(spec: { topics?: string[]; topicPattern?: string }) {
  const lines: { level: number; msg: string; topics?: string[] }[] = [];
  const cluster = { topics: [...(spec.topics ?? [])], down: false };
  const admin = {
    listTopics: async () => {
      if (cluster.down) throw new Error('Broker not connected');
      return [...cluster.topics];
    },
  } as unknown as Admin;
  const log = createLogger('info', { write: (l: string) => lines.push(JSON.parse(l)) });
  const gauge: number[] = [];
  const sub = new TopicSubscription({ ...spec, topicRefreshInterval: 60_000 }, admin, log, (n) => gauge.push(n));
  return { sub, cluster, lines, gauge };
}

describe('TopicSubscription: literal topics deleted under the pipeline', () => {
  it('logs a disappearance once, shows it in `missing`, and logs the return once', async () => {
    const { sub, cluster, lines, gauge } = subscription({ topics: ['rates', 'fx'] });
    const onChange = jest.fn(async () => undefined);
    await sub.refresh(onChange);
    expect(sub.missing).toEqual([]);
    cluster.topics = ['fx'];
    await sub.refresh(onChange);
    await sub.refresh(onChange);
    expect(sub.missing).toEqual(['rates']);
    const missing = lines.filter((l) => l.msg.startsWith('SOURCE TOPIC MISSING'));
    expect(missing).toHaveLength(1);
    expect(missing[0]).toMatchObject({ level: 50, topics: ['rates'] });
    cluster.down = true; // an unavailable cluster says nothing about the topics
    await sub.refresh(onChange);
    expect(sub.missing).toEqual(['rates']);
    cluster.down = false;
    cluster.topics = ['fx', 'rates'];
    await sub.refresh(onChange);
    expect(sub.missing).toEqual([]);
    expect(lines.filter((l) => l.msg.startsWith('source topic exists again'))).toEqual([expect.objectContaining({ topics: ['rates'] })]);
    // The gauge follows every refresh that could list the topics (not the one during the outage).
    expect(gauge).toEqual([0, 1, 1, 0]);
    expect(onChange).not.toHaveBeenCalled(); // a literal list never re-subscribes
    expect(sub.topics).toEqual(['rates', 'fx']);
  });

  it('a pattern subscription reports changes of the matched set instead', async () => {
    const { sub, cluster } = subscription({ topicPattern: 'rates-.*' });
    cluster.topics = ['rates-a', 'other'];
    await sub.resolve();
    cluster.topics = ['rates-b'];
    const onChange = jest.fn(async () => undefined);
    await sub.refresh(onChange);
    expect(onChange).toHaveBeenCalledWith({ topics: ['rates-b'], added: ['rates-b'], removed: ['rates-a'] });
    expect(sub.missing).toEqual([]);
  });
});

describe('TopicSubscription.stop', () => {
  it('resolves only once the refresh in flight has ended, so the admin is closed after its last request', async () => {
    jest.useFakeTimers();
    try {
      let answer!: (topics: string[]) => void;
      const admin = { listTopics: () => new Promise<string[]>((r) => (answer = r)) } as unknown as Admin;
      const sub = new TopicSubscription({ topics: ['rates'], topicRefreshInterval: 1_000 }, admin, createLogger('silent'), () => undefined);
      sub.watch(async () => undefined);
      jest.advanceTimersByTime(1_000); // a refresh starts and waits for the listing
      let stopped = false;
      const stop = sub.stop().then(() => (stopped = true));
      await Promise.resolve();
      expect(stopped).toBe(false);
      answer(['rates']);
      await stop;
      expect(stopped).toBe(true);
      jest.advanceTimersByTime(5_000); // no refresh after the stop
      expect(await sub.stop()).toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('waits for a slow refresh even when later ticks fired while it was in flight (they share it, start none)', async () => {
    jest.useFakeTimers();
    try {
      let answer!: (topics: string[]) => void;
      let listings = 0;
      const admin = {
        listTopics: () => {
          listings++;
          return new Promise<string[]>((r) => (answer = r));
        },
      } as unknown as Admin;
      const sub = new TopicSubscription(
        { topicPattern: 'rates-.*', topicRefreshInterval: 500 },
        admin,
        createLogger('silent'),
        () => undefined,
      );
      sub.watch(async () => undefined);
      jest.advanceTimersByTime(500); // a refresh starts and its listing hangs
      jest.advanceTimersByTime(1_500); // three more ticks while it is in flight
      expect(listings).toBe(1);
      let stopped = false;
      const stop = sub.stop().then(() => (stopped = true));
      for (let i = 0; i < 5; i++) await Promise.resolve();
      expect(stopped).toBe(false);
      answer(['rates-a']);
      await stop;
      expect(stopped).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
