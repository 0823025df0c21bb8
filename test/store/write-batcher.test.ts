import { StoreError } from '../../src/errors';
import { keyHash, versionRowId } from '../../src/store/cassandra/key-hash';
import { BatchSender, CoalescedWrite, WriteBatcher, WriteBatcherOptions } from '../../src/store/cassandra/write-batcher';

/** A fake sender recording every request; rows whose id is in `poison` make any request carrying them fail. */
class FakeSender implements BatchSender {
  readonly sent: { rows: string[]; timestamp: number }[] = [];
  readonly poison = new Set<unknown>();
  failNext: unknown[] = [];
  private ts = 1000;
  private readonly pending: (() => void)[] = [];
  holdAcks = false;

  groupOf(routingKey: Buffer): string {
    // Routing keys starting with 'a' live on one replica set, everything else on another.
    return routingKey[0] === 0x61 ? 'replicas-A' : 'replicas-B';
  }

  nextTimestamp(): number {
    return ++this.ts;
  }

  /** The abandonment check of each request, in send order. */
  readonly abandonedChecks: (() => boolean)[] = [];

  send(writes: readonly CoalescedWrite[], timestamp: number, abandoned?: () => boolean): Promise<unknown> {
    this.sent.push({ rows: writes.map((w) => w.params[0] as string), timestamp });
    if (abandoned) this.abandonedChecks.push(abandoned);
    const injected = this.failNext.shift();
    if (injected) return Promise.reject(injected);
    if (writes.some((w) => this.poison.has(w.params[0]))) {
      return Promise.reject(new StoreError('write batch: value too large', { code: 'CASSANDRA_ERROR', retriable: false }));
    }
    if (!this.holdAcks) return Promise.resolve();
    return new Promise<void>((r) => this.pending.push(r));
  }

  ackAll(): void {
    for (const r of this.pending.splice(0)) r();
  }
}

/** A row named id; rows with the same name are the same Cassandra row. */
const row = (id: string, routing = 'a', bytes = 100): CoalescedWrite => ({
  query: 'INSERT',
  params: [id],
  routingKey: Buffer.from(routing),
  partitionHash: keyHash(Buffer.from(routing)),
  rowId: versionRowId(keyHash(Buffer.from(id)), 7),
  bytes,
});
const defaults: WriteBatcherOptions = { maxBytes: 1000, maxRows: 4, lingerMs: 5, maxConcurrent: 8 };

/** Lets pending promise callbacks run. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('WriteBatcher', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('groups rows by replica set and sends an open batch when its linger ends', async () => {
    const s = new FakeSender();
    const b = new WriteBatcher(s, defaults);
    const done = [b.write(row('a1', 'a')), b.write(row('b1', 'b')), b.write(row('a2', 'a'))];
    expect(s.sent).toEqual([]);
    jest.advanceTimersByTime(5);
    await Promise.all(done);
    expect(s.sent.map((x) => x.rows)).toEqual([['a1', 'a2'], ['b1']]);
    expect(b.requests).toBe(2);
  });

  it('seals a batch at maxRows and at maxBytes without waiting for the linger', async () => {
    const s = new FakeSender();
    const b = new WriteBatcher(s, defaults);
    const rows = ['r1', 'r2', 'r3', 'r4', 'r5'].map((id) => b.write(row(id)));
    await settle();
    expect(s.sent.map((x) => x.rows)).toEqual([['r1', 'r2', 'r3', 'r4']]);
    const big = [b.write(row('x1', 'b', 600)), b.write(row('x2', 'b', 600))];
    await settle();
    // x2 does not fit next to x1 (1200 > 1000 bytes): x1 leaves alone.
    expect(s.sent.map((x) => x.rows)).toEqual([['r1', 'r2', 'r3', 'r4'], ['x1']]);
    jest.advanceTimersByTime(5);
    await Promise.all([...rows, ...big]);
    expect(s.sent.map((x) => x.rows)).toEqual([['r1', 'r2', 'r3', 'r4'], ['x1'], ['r5'], ['x2']]);
  });

  it('sends a row larger than maxBytes on its own, and every row alone when linger is 0', async () => {
    const s = new FakeSender();
    const b = new WriteBatcher(s, defaults);
    await b.write(row('huge', 'a', 5000));
    const off = new WriteBatcher(s, { ...defaults, lingerMs: 0 });
    await Promise.all([off.write(row('o1')), off.write(row('o2'))]);
    expect(s.sent.map((x) => x.rows)).toEqual([['huge'], ['o1'], ['o2']]);
  });

  it('resolves a row only when the request carrying it is acknowledged', async () => {
    const s = new FakeSender();
    s.holdAcks = true;
    const b = new WriteBatcher(s, defaults);
    let acked = false;
    const p = b.write(row('r1')).then(() => (acked = true));
    jest.advanceTimersByTime(5);
    await settle();
    expect(s.sent).toHaveLength(1);
    expect(acked).toBe(false);
    s.ackAll();
    await p;
    expect(acked).toBe(true);
  });

  it('gives later batches later timestamps and never puts two writes of one row in the same batch', async () => {
    const s = new FakeSender();
    const b = new WriteBatcher(s, defaults);
    const p = [b.write(row('k@1')), b.write(row('k@2')), b.write(row('k@1'))];
    jest.advanceTimersByTime(5);
    await Promise.all(p);
    expect(s.sent.map((x) => x.rows)).toEqual([['k@1', 'k@2'], ['k@1']]);
    expect(s.sent[1].timestamp).toBeGreaterThan(s.sent[0].timestamp);
  });

  it('bounds batches in flight and sends the waiting ones in order as slots free up', async () => {
    const s = new FakeSender();
    s.holdAcks = true;
    const b = new WriteBatcher(s, { ...defaults, maxRows: 1, maxConcurrent: 2 });
    const p = ['r1', 'r2', 'r3', 'r4'].map((id) => b.write(row(id)));
    await settle();
    expect(s.sent.map((x) => x.rows)).toEqual([['r1'], ['r2']]);
    expect(b.queued).toBe(2);
    s.ackAll();
    await settle();
    expect(s.sent.map((x) => x.rows)).toEqual([['r1'], ['r2'], ['r3'], ['r4']]);
    s.ackAll();
    await Promise.all(p);
    // Timestamps were fixed in issue order, even for the batches that waited.
    const ts = s.sent.map((x) => x.timestamp);
    expect([...ts].sort((x, y) => x - y)).toEqual(ts);
  });

  it('while every slot is busy, takes the queued rows of one Cassandra partition into one batch', async () => {
    const s = new FakeSender();
    s.holdAcks = true;
    const b = new WriteBatcher(s, { ...defaults, maxConcurrent: 1 });
    const p = [b.write(row('first', 'a-x'))];
    jest.advanceTimersByTime(5);
    await settle();
    expect(s.sent.map((x) => x.rows)).toEqual([['first']]);
    // Issued while the only slot is busy: two Cassandra partitions, interleaved.
    for (const [id, part] of [
      ['x1', 'a-x'],
      ['y1', 'a-y'],
      ['x2', 'a-x'],
      ['y2', 'a-y'],
      ['x3', 'a-x'],
    ])
      p.push(b.write(row(id, part)));
    s.ackAll();
    await settle();
    s.ackAll();
    await settle();
    jest.advanceTimersByTime(5);
    await settle();
    s.ackAll();
    await Promise.all(p);
    const [first, grouped, rest] = s.sent.map((x) => x.rows);
    expect(s.sent).toHaveLength(3);
    expect(first).toEqual(['first']);
    // Sorted by partition (in either order), issue order within one: x1 x2 x3 | y1 y2, cut at 4 rows.
    expect([
      ['x1', 'x2', 'x3', 'y1'],
      ['y1', 'y2', 'x1', 'x2'],
    ]).toContainEqual(grouped);
    expect([...grouped, ...rest].sort()).toEqual(['x1', 'x2', 'x3', 'y1', 'y2']);
  });

  it('gives a later write of a waiting row a later timestamp, also when it is larger than maxBytes', async () => {
    const s = new FakeSender();
    const b = new WriteBatcher(s, defaults);
    // The same row (same rowId) written twice; the second write is told apart by its bind value.
    const later: CoalescedWrite = { ...row('k@1', 'a', 5000), params: ['k@1 later'] };
    const p = [b.write(row('k@1', 'a', 100)), b.write(later)];
    jest.advanceTimersByTime(5);
    await Promise.all(p);
    expect(s.sent.map((x) => x.rows)).toEqual([['k@1'], ['k@1 later']]);
    expect(s.sent[1].timestamp).toBeGreaterThan(s.sent[0].timestamp);
  });

  it('splits a batch failing with a row-specific error until the poison row stands alone; its neighbours succeed', async () => {
    const s = new FakeSender();
    s.poison.add('r3');
    const b = new WriteBatcher(s, { ...defaults, maxRows: 8 });
    const ids = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];
    const results = ids.map((id) =>
      b.write(row(id)).then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    );
    jest.advanceTimersByTime(5);
    expect(await Promise.all(results)).toEqual(['ok', 'ok', 'write batch: value too large', 'ok', 'ok', 'ok']);
    // Every split keeps the batch's timestamp.
    expect(new Set(s.sent.map((x) => x.timestamp)).size).toBe(1);
    expect(s.sent.some((x) => x.rows.length === 1 && x.rows[0] === 'r3')).toBe(true);
    expect(s.sent.length).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(ids.length)));
  });

  it('splits a batch that fails because one of its tables was dropped: rows of live tables go through', async () => {
    const s = new FakeSender();
    const b = new WriteBatcher(s, defaults);
    // Any request carrying a row of the dropped table s_g1 fails whole, as Cassandra answers a batch naming it.
    const send = s.send.bind(s);
    s.send = (writes, timestamp) =>
      writes.some((w) => String(w.params[0]).startsWith('g1'))
        ? (s.sent.push({ rows: writes.map((w) => w.params[0] as string), timestamp }),
          Promise.reject(new StoreError('unconfigured table s_g1', { code: 'TABLE_MISSING', retriable: true })))
        : send(writes, timestamp);
    const results = ['g2-a', 'g2-b', 'g1-c', 'g2-d'].map((id) =>
      b.write(row(id)).then(
        () => 'ok',
        (e: StoreError) => e.code,
      ),
    );
    jest.advanceTimersByTime(5);
    expect(await Promise.all(results)).toEqual(['ok', 'ok', 'TABLE_MISSING', 'ok']);
    expect(s.sent.filter((x) => x.rows.length === 1).map((x) => x.rows[0])).toEqual(expect.arrayContaining(['g1-c', 'g2-d']));
  });

  it('fails every row of a batch alike, without splitting, when retries of an outage are exhausted', async () => {
    const s = new FakeSender();
    s.failNext = [new StoreError('gave up after 9 attempts: unavailable', { code: 'RETRIES_EXHAUSTED', retriable: false })];
    const b = new WriteBatcher(s, defaults);
    const results = ['r1', 'r2'].map((id) =>
      b.write(row(id)).then(
        () => 'ok',
        (e: StoreError) => e.code,
      ),
    );
    jest.advanceTimersByTime(5);
    expect(await Promise.all(results)).toEqual(['RETRIES_EXHAUSTED', 'RETRIES_EXHAUSTED']);
    expect(s.sent).toHaveLength(1);
  });

  it('hashes equal version rows equal, and different keys or timestamps (almost always) differently', () => {
    expect(versionRowId(keyHash(Buffer.from('k1')), 1000)).toBe(versionRowId(keyHash(Buffer.from('k1')), 1000));
    const ids = new Set<number>();
    for (let k = 0; k < 100; k++) for (let t = 0; t < 100; t++) ids.add(versionRowId(keyHash(Buffer.from(`k${k}`)), 1_700_000_000_000 + t));
    expect(ids.size).toBeGreaterThan(9990);
  });

  it('flush() sends every open batch at once', async () => {
    const s = new FakeSender();
    const b = new WriteBatcher(s, defaults);
    const p = [b.write(row('a1', 'a')), b.write(row('b1', 'b'))];
    b.flush();
    await Promise.all(p);
    expect(s.sent.map((x) => x.rows)).toEqual([['a1'], ['b1']]);
  });

  it('keeps the listener of each addition of one row object: a row added again while held is copied', async () => {
    const s = new FakeSender();
    s.holdAcks = true;
    const b = new WriteBatcher(s, { ...defaults, lingerMs: 0 });
    const heard: string[] = [];
    const w = row('r1');
    b.add(w, { rowWritten: () => void heard.push('first'), rowFailed: () => undefined });
    b.add(w, { rowWritten: () => void heard.push('second'), rowFailed: () => undefined });
    await settle();
    expect(s.sent.map((x) => x.rows)).toEqual([['r1'], ['r1']]);
    s.ackAll();
    await settle();
    expect(heard.sort()).toEqual(['first', 'second']);
  });

  it("tells the sender a request is abandoned only once every row's listener has given up (a stopped task's writes)", async () => {
    const s = new FakeSender();
    s.holdAcks = true;
    const b = new WriteBatcher(s, { ...defaults, lingerMs: 0 });
    const gaveUp = { x: false, y: false };
    const listener = (id: 'x' | 'y') => ({ rowWritten: () => undefined, rowFailed: () => undefined, abandoned: () => gaveUp[id] });
    b.add(row('x1', 'a', 100), listener('x'));
    b.add(row('y1', 'a', 100), listener('y'));
    b.add(row('z1', 'a', 100), { rowWritten: () => undefined, rowFailed: () => undefined });
    await settle();
    expect(s.abandonedChecks).toHaveLength(3);
    const [x, y, z] = s.abandonedChecks;
    expect([x(), y(), z()]).toEqual([false, false, false]);
    gaveUp.x = true;
    expect([x(), y(), z()]).toEqual([true, false, false]);
    gaveUp.y = true;
    // A listener without the hook (the kv path) never gives up: its request keeps its retries.
    expect([x(), y(), z()]).toEqual([true, true, false]);
    s.ackAll();
  });
  it('never sends a row whose partition was revoked before its batch was cut: it fails unsent; the others go', async () => {
    const s = new FakeSender();
    const b = new WriteBatcher(s, defaults);
    let revoked = false;
    const failed: unknown[] = [];
    const written: string[] = [];
    const listener = (id: string, fenced: boolean) => ({
      rowWritten: () => void written.push(id),
      rowFailed: (e: unknown) => void failed.push(e),
      revoked: () => fenced && revoked,
    });
    b.add(row('r1'), listener('r1', true));
    b.add(row('k1'), listener('k1', false));
    revoked = true; // the partition of r1 goes to another worker while its row is staged
    jest.advanceTimersByTime(5);
    await settle();
    expect(s.sent.map((x) => x.rows)).toEqual([['k1']]);
    expect(written).toEqual(['k1']);
    expect(failed).toEqual([expect.objectContaining({ code: 'RETRIES_EXHAUSTED', message: expect.stringMatching(/revoked/) })]);
  });
  it("seals the staged rows when the ring changes, so a row's later write, now in another group, gets the later timestamp", async () => {
    class MovingSender extends FakeSender {
      moved = false;
      changed = false;
      override groupOf(routingKey: Buffer): string {
        return this.moved ? 'replicas-new' : super.groupOf(routingKey);
      }
      topologyChanged(): boolean {
        const c = this.changed;
        this.changed = false;
        return c;
      }
    }
    const s = new MovingSender();
    const b = new WriteBatcher(s, defaults);
    const done = [b.write(row('r1')), b.write(row('k1'))];
    s.moved = true; // a node joined: r1's replica set is another one now
    s.changed = true;
    // The new group fills a batch (maxRows 4) at once, while the old one would wait for its linger.
    for (const id of ['r1', 'n1', 'n2', 'n3']) done.push(b.write(row(id)));
    jest.advanceTimersByTime(5);
    await settle();
    await Promise.all(done);
    expect(s.sent.map((x) => x.rows)).toEqual([
      ['r1', 'k1'],
      ['r1', 'n1', 'n2', 'n3'],
    ]);
    expect(s.sent[0].timestamp).toBeLessThan(s.sent[1].timestamp);
  });
});
