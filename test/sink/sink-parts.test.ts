import { OffsetTracker } from '../../src/sink/offset-tracker';
import { WriteBudget } from '../../src/sink/write-budget';
import { CONNECT_STAGE_NAMES, contextHeadersFor, DeadLetterQueueReporter } from '../../src/sink/dlq-reporter';
import { BadRecordError, PIPELINE_STAGES } from '../../src/errors';
import fc from 'fast-check';

describe('OffsetTracker', () => {
  it('never lets the watermark pass a record that is not durable', () => {
    const t = new OffsetTracker();
    const r10 = t.begin('10', 100);
    const r11 = t.begin('11', 150);
    const r12 = t.begin('12', 150);
    expect(t.watermark()).toBeNull();
    t.complete(r11);
    expect(t.watermark()).toBeNull();
    t.complete(r10);
    expect(t.watermark()).toEqual({ offset: 12n, observedStreamTime: 150 });
    t.complete(r12);
    expect(t.watermark()).toEqual({ offset: 13n, observedStreamTime: 150 });
    expect(t.inFlight).toBe(0);
  });
  it('property: watermark is the first incomplete offset', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 200 }), (doneFlags) => {
        const t = new OffsetTracker();
        const recs = doneFlags.map((_, i) => t.begin(String(i), i));
        doneFlags.forEach((d, i) => d && t.complete(recs[i]));
        const firstPending = doneFlags.indexOf(false);
        const wm = t.watermark();
        if (firstPending === 0) return wm === null;
        const expected = firstPending === -1 ? doneFlags.length : firstPending;
        return wm !== null && wm.offset === BigInt(expected) && wm.observedStreamTime === expected - 1;
      }),
    );
  });
});

describe('WriteBudget', () => {
  it('bounds writes by count and hands budget to waiters', async () => {
    const b = new WriteBudget(2, 1 << 20);
    expect(b.tryAcquire(10)).toBe(true);
    expect(b.tryAcquire(10)).toBe(true);
    expect(await b.acquire(10, 10)).toBe(false);
    const w = b.acquire(10, 1000);
    b.release(10);
    expect(await w).toBe(true);
    expect(b.inFlight).toBe(2);
  });
  it('bounds writes by bytes, and admits one oversized record when nothing else is in flight', async () => {
    const b = new WriteBudget(64, 100);
    expect(b.tryAcquire(60)).toBe(true);
    expect(b.tryAcquire(50)).toBe(false);
    expect(b.tryAcquire(40)).toBe(true);
    expect(b.inFlightBytes).toBe(100);
    const big = b.acquire(500, 1000);
    b.release(60);
    expect(b.tryAcquire(500)).toBe(false);
    b.release(40);
    expect(await big).toBe(true);
    expect(b.inFlightBytes).toBe(500);
    expect(b.tryAcquire(1)).toBe(false);
  });

  it("shares: a pipeline whose writes stall holds at most its share, and another's waiting writes are not queued behind it", async () => {
    const worker = new WriteBudget(8, 1 << 20);
    const [x, y] = [worker.share(2), worker.share(2)];
    expect([x.maxCount, y.maxCount]).toEqual([6, 6]);
    // Alone, a pipeline draws on the worker's budget itself (its order and cost unchanged).
    expect(worker.share(1)).toBe(worker);
    // x's writes stall: it takes all it may, and waits for more.
    for (let i = 0; i < 6; i++) expect(x.tryAcquire(10)).toBe(true);
    expect(x.tryAcquire(10)).toBe(false);
    const xWaits = x.acquire(10, 1000);
    // y still finds room, the rest of the worker's budget.
    expect(y.tryAcquire(10)).toBe(true);
    expect(y.tryAcquire(10)).toBe(true);
    expect(worker.inFlight).toBe(8);
    const yWaits = y.acquire(10, 1000);
    // y's write lands: y's waiter gets the budget, past x's (whose own share is still used up).
    y.release(10);
    expect(await yWaits).toBe(true);
    expect([x.inFlight, y.inFlight, worker.inFlight]).toEqual([6, 2, 8]);
    // x's write lands at last: its waiter goes on.
    x.release(10);
    expect(await xWaits).toBe(true);
    expect([x.inFlight, worker.inFlight]).toEqual([6, 8]);
  });

  it('shares: a waiter the shared budget cannot take yet is not overtaken by a later one', async () => {
    const worker = new WriteBudget(64, 100);
    const [x, y] = [worker.share(2), worker.share(2)];
    expect(x.tryAcquire(50)).toBe(true);
    expect(y.tryAcquire(40)).toBe(true);
    expect(y.tryAcquire(5)).toBe(true);
    const big = x.acquire(20, 1000);
    const small = y.acquire(10, 1000);
    let smallDone = false;
    void small.then(() => (smallDone = true));
    // 10 bytes free: the small write would fit, but the larger one came first and does not fit yet.
    y.release(5);
    await Promise.resolve();
    expect(smallDone).toBe(false);
    y.release(40);
    expect(await big).toBe(true);
    expect(await small).toBe(true);
    expect(worker.inFlightBytes).toBe(80);
  });
});

describe('DLQ context headers', () => {
  it('carries Kafka Connect error context', () => {
    const h = contextHeadersFor(
      { topic: 't', partition: 3, offset: '42', timestamp: '1', key: null, value: null },
      new BadRecordError('invalid JSON', { stage: 'value-convert' }),
      'value-convert',
      'p',
    );
    expect(h['__connect.errors.topic']).toBe('t');
    expect(h['__connect.errors.partition']).toBe('3');
    expect(h['__connect.errors.offset']).toBe('42');
    expect(h['__connect.errors.stage']).toBe('VALUE_CONVERTER');
    expect(h['__connect.errors.exception.class.name']).toBe('BadRecordError');
    expect(h['__connect.errors.exception.message']).toBe('invalid JSON');
  });
});

describe('DLQ stage names', () => {
  it("every record-path stage maps to a value of Kafka Connect's Stage enum", () => {
    const connectStages = [
      'KEY_CONVERTER',
      'VALUE_CONVERTER',
      'HEADER_CONVERTER',
      'TRANSFORMATION',
      'TASK_PUT',
      'TASK_POLL',
      'KAFKA_PRODUCE',
      'KAFKA_CONSUME',
    ];
    for (const stage of PIPELINE_STAGES) expect(connectStages).toContain(CONNECT_STAGE_NAMES[stage]);
    expect(CONNECT_STAGE_NAMES['key-convert']).toBe('KEY_CONVERTER');
    expect(CONNECT_STAGE_NAMES.extract).toBe('TRANSFORMATION');
    expect(CONNECT_STAGE_NAMES.write).toBe('TASK_PUT');
  });
});

describe('DeadLetterQueueReporter headers', () => {
  it("keeps a context header the record already carries (a replayed dead letter names its first failure), as Connect's reporter does", async () => {
    const sent: { headers: Record<string, unknown> }[] = [];
    const producer = { send: async (r: { messages: { headers: Record<string, unknown> }[] }) => void sent.push(...r.messages) };
    const reporter = new DeadLetterQueueReporter(producer as never, 'dlq', 'p');
    const replayed = {
      topic: 'dlq',
      partition: 0,
      offset: '9',
      timestamp: '1',
      key: null,
      value: Buffer.from('x'),
      headers: { '__connect.errors.topic': Buffer.from('orders'), '__connect.errors.offset': Buffer.from('42'), own: Buffer.from('kept') },
    };
    await reporter.report(replayed, new BadRecordError('bad', { stage: 'extract' }), 'extract');
    const h = sent[0].headers;
    expect(String(h['__connect.errors.topic'])).toBe('orders');
    expect(String(h['__connect.errors.offset'])).toBe('42');
    expect(String(h.own)).toBe('kept');
    expect(h['__connect.errors.partition']).toBe('0');
    expect(h['__connect.errors.stage']).toBe('TRANSFORMATION');
  });
});

describe('DeadLetterQueueReporter failures', () => {
  const record = { topic: 't', partition: 0, offset: '7', timestamp: '1', key: null, value: Buffer.from('x') };
  const failingWith = (e: unknown) => new DeadLetterQueueReporter({ send: async () => Promise.reject(e) } as never, 'dlq', 'p');

  it("a broker outage longer than the producer's own retries is retriable (kafkajs gives up with a non-retriable error wrapping a retriable one)", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { KafkaJSNumberOfRetriesExceeded, KafkaJSConnectionError } = require('kafkajs/src/errors');
    const outage = new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED'), {
      retryCount: 2,
      retryTime: 2000,
    });
    expect(outage.retriable).toBe(false);
    await expect(
      failingWith(outage).report(record, new BadRecordError('bad', { stage: 'value-convert' }), 'value-convert'),
    ).rejects.toMatchObject({
      code: 'DLQ_FAILED',
      retriable: true,
    });
  });

  it('a refusal (not authorized for the topic) is not retriable', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { KafkaJSProtocolError } = require('kafkajs/src/errors');
    const refused = new KafkaJSProtocolError({ type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, retriable: false, message: 'Not authorized' });
    await expect(
      failingWith(refused).report(record, new BadRecordError('bad', { stage: 'value-convert' }), 'value-convert'),
    ).rejects.toMatchObject({
      code: 'DLQ_FAILED',
      retriable: false,
    });
  });
});
