import { AdjunctError, RetriesExhaustedError, StoreError } from '../../src/errors';
import { YIELD_EVERY_RECORDS } from '../../src/sink/sink-loop';
import { batchOf, fakeTask, messages, settle } from './fakes';

const registryDown = () => new AdjunctError('registry unreachable', { code: 'REGISTRY_UNAVAILABLE', stage: 'value-convert' });

describe('sink loop (convert → deliver → commit) without Kafka', () => {
  it('writes every record in offset order and commits past the last one with its observed stream time', async () => {
    const t = fakeTask();
    const { b, control } = batchOf(messages(['1', '2', '3', 'skip', '5']));
    await t.core.loop.eachBatch(b);
    await settle();
    await t.core.committer.commit();
    expect(t.writer.written.map((w) => w.key)).toEqual(['k0', 'k1', 'k2', 'k4']);
    expect(control.resolved).toEqual(['4']);
    expect(t.committedOffset()).toBe('5');
    expect(t.writer.flushed).toEqual([1004]);
    expect(t.core.counts).toMatchObject({ consumed: 5, written: 4, skipped: 1, deadLettered: 0 });
  });

  it('yields to I/O every YIELD_EVERY_RECORDS records of a large batch, so write acknowledgements are handled meanwhile', async () => {
    const t = fakeTask();
    const n = YIELD_EVERY_RECORDS * 2 + 10;
    const { b } = batchOf(messages(Array.from({ length: n }, (_, i) => String(i + 1))));
    let writtenWhenIoRan = -1;
    setImmediate(() => (writtenWhenIoRan = t.writer.written.length));
    await t.core.loop.eachBatch(b);
    expect(writtenWhenIoRan).toBe(YIELD_EVERY_RECORDS);
    expect(t.writer.written).toHaveLength(n);
  });

  it('an expired record (nothing sent to Cassandra) leaves a stall as it is; a durable write clears it', async () => {
    const t = fakeTask();
    t.parts.stall.failed(new Error('Cassandra timed out'));
    t.writer.expire.add('k0');
    await t.core.loop.eachBatch(batchOf(messages(['1'])).b);
    await settle();
    expect(t.core.counts.expired).toBe(1);
    expect(t.parts.stall.failing).toBe(true);
    await t.core.loop.eachBatch(batchOf(messages(['2', '3'], 1)).b);
    await settle();
    expect(t.parts.stall.failing).toBe(false);
  });

  it('tolerance all: a poison record goes to the DLQ with its stage and original bytes; the rest is written and committed', async () => {
    const t = fakeTask({ tolerance: 'all' });
    await t.core.loop.eachBatch(batchOf(messages(['1', '{bad', '3'])).b);
    await settle();
    await t.core.committer.commit();
    expect(t.dlq.letters).toHaveLength(1);
    expect(t.dlq.letters[0].record).toMatchObject({ topic: 't', partition: 0, offset: '1' });
    expect(t.dlq.letters[0].record.value?.toString()).toBe('{bad');
    expect(t.dlq.letters[0].stage).toBe('value-convert');
    expect(t.writer.written.map((w) => w.key)).toEqual(['k0', 'k2']);
    expect(t.committedOffset()).toBe('3');
    expect(t.core.lifecycle.state).toBe('CREATED');
  });

  it('tolerance none: stops at the poison record, names it, and commits nothing past it', async () => {
    const t = fakeTask({ tolerance: 'none' });
    await t.core.loop.eachBatch(batchOf(messages(['1', '{bad', '3'])).b);
    await settle();
    await t.core.committer.commit();
    expect(t.fatal).toHaveLength(1);
    expect(t.fatal[0].message).toContain('stopped at t/0@1 (stage value-convert)');
    expect(t.core.lifecycle.failed).toBe(true);
    expect(t.writer.written.map((w) => w.key)).toEqual(['k0']);
    expect(t.committedOffset()).toBe('1');
  });

  it('a write the store refuses for this record (RECORD_REJECTED) is dead-lettered at stage write', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.writer.failWith.set('k1', () => new StoreError('mutation too large', { code: 'RECORD_REJECTED' }));
    await t.core.loop.eachBatch(batchOf(messages(['1', '2', '3'])).b);
    await settle();
    await settle();
    await t.core.committer.commit();
    expect(t.dlq.letters.map((l) => [l.record.offset, l.stage])).toEqual([['1', 'write']]);
    expect(t.committedOffset()).toBe('3');
  });

  it('tolerance all never dead-letters an infrastructure failure: the pipeline fails with nothing committed past it', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.writer.failWith.set('k1', () => new StoreError('table dropped', { code: 'CASSANDRA_ERROR' }));
    await t.core.loop.eachBatch(batchOf(messages(['1', '2', '3'])).b);
    await settle();
    await settle();
    await t.core.committer.commit();
    expect(t.dlq.letters).toHaveLength(0);
    expect(t.core.lifecycle.failed).toBe(true);
    expect(t.committedOffset()).toBe('1');
  });

  it('a retriable DLQ failure is retried with backoff, heartbeating between attempts', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.dlq.failures = [
      new AdjunctError('broker down', { code: 'DLQ_FAILED', retriable: true }),
      new AdjunctError('broker down', { code: 'DLQ_FAILED', retriable: true }),
    ];
    const { b, control } = batchOf(messages(['{bad', '2']));
    await t.core.loop.eachBatch(b);
    await settle();
    expect(t.dlq.attempts).toBe(3);
    expect(t.dlq.letters).toHaveLength(1);
    expect(control.heartbeats).toBeGreaterThanOrEqual(2);
    expect(t.clock.slept).toBeGreaterThan(0);
    expect(t.core.lifecycle.failed).toBe(false);
  });

  it('a DLQ that refuses the record fails the pipeline (DLQ_FAILED) and commits nothing past the record', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.dlq.failures = [new AdjunctError('record too large for the DLQ topic', { code: 'DLQ_FAILED', retriable: false })];
    await t.core.loop.eachBatch(batchOf(messages(['1', '{bad', '3'])).b);
    await settle();
    await t.core.committer.commit();
    expect(t.fatal[0].code).toBe('DLQ_FAILED');
    expect(t.fatal[0].message).toContain('t/0@1');
    expect(t.committedOffset()).toBe('1');
    expect(t.writer.written.map((w) => w.key)).toEqual(['k0']);
  });

  it('shutdown mid-batch: a write whose retries were interrupted stays uncommitted, is never dead-lettered, and the task does not fail', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.writer.hold = true;
    await t.core.loop.eachBatch(batchOf(messages(['1', '2', '3'])).b);
    t.writer.pending[0].resolve('written');
    t.core.lifecycle.stopping = true;
    t.writer.pending[1].reject(new RetriesExhaustedError(new StoreError('unavailable', { code: 'CASSANDRA_UNAVAILABLE' }), 3, 100));
    t.writer.pending[2].resolve('written');
    await settle();
    await settle();
    await t.core.committer.commit();
    expect(t.dlq.attempts).toBe(0);
    expect(t.core.lifecycle.failed).toBe(false);
    expect(t.committedOffset()).toBe('1');
    expect(t.core.partitions.draining()).toBe(false);
  });

  it('backpressure: with the write budget full the loop waits, heartbeating, and goes on when writes complete', async () => {
    const t = fakeTask({}, {}, { count: 2, bytes: 1 << 20 });
    t.writer.hold = true;
    const { b, control } = batchOf(messages(['1', '2', '3', '4']));
    const loop = t.core.loop.eachBatch(b);
    while (control.heartbeats < 2) await new Promise((r) => setTimeout(r, 5));
    expect(t.writer.pending).toHaveLength(2);
    expect(control.resolved).toEqual(['1']);
    t.writer.pending[0].resolve('written');
    t.writer.pending[1].resolve('written');
    await loop;
    expect(t.writer.pending).toHaveLength(4);
  });

  it('records written behind a pending one (a dead letter retried while the DLQ is down) are bounded: the partition waits for it', async () => {
    const t = fakeTask({ tolerance: 'all', retryMaxDelayMs: 50 }, {}, { count: 4, bytes: 1 << 20 });
    t.core.lifecycle.set('RUNNING');
    t.writer.failWith.set('k0', () => new StoreError('mutation too large', { code: 'RECORD_REJECTED' }));
    const dlqDown = () => new AdjunctError('leader not available', { code: 'DLQ_UNAVAILABLE', stage: 'dlq', retriable: true });
    t.dlq.failures = Array.from({ length: 100_000 }, dlqDown);
    const { b } = batchOf(messages(Array.from({ length: 200 }, (_, i) => String(i))));
    const loop = t.core.loop.eachBatch(b);
    for (let i = 0; i < 50; i++) await settle();
    const st = t.core.partitions.get('t', 0)!;
    // 4 records × the budget of 4: held behind k0, whose dead letter waits for the DLQ.
    expect(st.tracker.inFlight).toBe(16);
    expect(t.writer.written).toHaveLength(15);
    t.dlq.failures = [];
    await loop;
    await settle();
    expect(t.dlq.letters.map((l) => l.record.offset)).toEqual(['0']);
    expect(t.writer.written).toHaveLength(199);
    expect(st.tracker.inFlight).toBe(0);
  });

  it('a seek of the partition while the loop waits stops the batch: no record past the wait is issued', async () => {
    const t = fakeTask({}, {}, { count: 2, bytes: 1 << 20 });
    t.writer.hold = true;
    let seeked = false;
    const { b, control } = batchOf(messages(['1', '2', '3', '4']), { stale: () => seeked });
    const loop = t.core.loop.eachBatch(b);
    while (control.heartbeats < 1) await new Promise((r) => setTimeout(r, 5));
    seeked = true;
    t.writer.pending[0].resolve('written');
    t.writer.pending[1].resolve('written');
    await loop;
    expect(t.writer.pending).toHaveLength(2);
    expect(t.core.counts.consumed).toBe(3);
    expect(control.resolved).toEqual(['1']);
  });

  it('a partition already seeked when the batch starts issues nothing', async () => {
    const t = fakeTask();
    const { b, control } = batchOf(messages(['1', '2']), { stale: () => true });
    await t.core.loop.eachBatch(b);
    expect(t.writer.written).toHaveLength(0);
    expect(control.resolved).toEqual([]);
  });

  it('backpressure by bytes: records larger than what is left of the byte budget wait for it', async () => {
    const t = fakeTask({}, {}, { count: 64, bytes: 10 });
    t.writer.hold = true;
    const { b, control } = batchOf(messages(['"12345"', '"67890"']));
    const loop = t.core.loop.eachBatch(b);
    while (control.heartbeats < 1) await new Promise((r) => setTimeout(r, 5));
    expect(t.writer.pending).toHaveLength(1);
    t.writer.pending[0].resolve('written');
    await loop;
    expect(t.writer.pending).toHaveLength(2);
  });

  it('registry outage: the record is retried (never dead-lettered), the task shows STALLED past retryTimeout and RUNNING after', async () => {
    const t = fakeTask({ tolerance: 'all', retryTimeoutMs: 2_000 });
    t.core.lifecycle.set('RUNNING');
    t.valueConverter.failures = Array.from({ length: 12 }, registryDown);
    const states: string[] = [];
    t.parts.stall.onChange(() => states.push(t.core.lifecycle.state));
    const { b, control } = batchOf(messages(['1', '2']));
    await t.core.loop.eachBatch(b);
    await settle();
    expect(states).toContain('STALLED');
    expect(t.core.lifecycle.state).toBe('RUNNING');
    expect(t.dlq.attempts).toBe(0);
    expect(t.writer.written.map((w) => w.key)).toEqual(['k0', 'k1']);
    expect(control.heartbeats).toBeGreaterThan(3);
  });

  it('errors.stallTimeout turns a long stall into FAILED (STALL_TIMEOUT), never into dead letters', async () => {
    const t = fakeTask({ tolerance: 'all', retryTimeoutMs: 1_000, stallTimeoutMs: 5_000 });
    t.valueConverter.failures = Array.from({ length: 1000 }, registryDown);
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'])).b);
    await settle();
    await t.core.committer.commit();
    expect(t.fatal.map((e) => e.code)).toEqual(['STALL_TIMEOUT']);
    expect(t.dlq.attempts).toBe(0);
    expect(t.commits).toHaveLength(0);
  });
});

describe('partitions fenced by a rebalance (Kafka Connect closes revoked partitions)', () => {
  /** kafkajs's heartbeat answer while the group rebalances. */
  const rebalancing = () => Object.assign(new Error('The group is rebalancing, so a rejoin is needed'), { type: 'REBALANCE_IN_PROGRESS' });

  it('a rebalance seen while a record waits for the registry fences its partition: the record is never written nor dead-lettered', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.core.lifecycle.set('RUNNING');
    await t.core.loop.eachBatch(batchOf(messages(['1'], 0)).b);
    await settle();
    const before = t.core.partitions.get('t', 0);
    t.valueConverter.failures = Array.from({ length: 50 }, registryDown);
    const { b } = batchOf(messages(['2', '3'], 1));
    b.heartbeat = () => Promise.reject(rebalancing());
    // The failure goes to kafkajs, which re-joins on it (its backoff had swallowed it), and so does a batch before the re-join.
    await expect(t.core.loop.eachBatch(b)).rejects.toMatchObject({ type: 'REBALANCE_IN_PROGRESS' });
    await expect(t.core.loop.eachBatch(batchOf(messages(['2', '3'], 1)).b)).rejects.toMatchObject({ type: 'REBALANCE_IN_PROGRESS' });
    await settle();
    // The registry came back long ago (or not): nothing of the fenced partition is written after the rebalance.
    t.valueConverter.failures = [];
    await settle();
    expect(t.writer.written.map((w) => w.key)).toEqual(['k0']);
    expect(t.dlq.attempts).toBe(0);
    expect(t.fatal).toEqual([]);
    expect(before?.fenced).toBe(true);
    // Re-assigned to this worker: a fresh state, at the group's committed offset, takes the partition up again.
    t.core.partitions.retain({ t: [0] });
    await t.core.loop.eachBatch(batchOf(messages(['2', '3'], 1)).b);
    await settle();
    expect(t.core.partitions.get('t', 0)).not.toBe(before);
    expect(t.writer.written.map((w) => w.key)).toEqual(['k0', 'k1', 'k2']);
  });

  it('a dead letter retried while the DLQ is down stops when a heartbeat fences its partition: left for the new owner, no failed task', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.core.lifecycle.set('RUNNING');
    t.dlq.failures = Array.from({ length: 50 }, () => new AdjunctError('broker down', { code: 'DLQ_FAILED', retriable: true }));
    const { b } = batchOf(messages(['{bad', '2'], 0));
    let beats = 0;
    // The first heartbeats pass; then the group rebalances under the partition.
    b.heartbeat = () => (++beats <= 2 ? Promise.resolve() : Promise.reject(rebalancing()));
    await t.core.loop.eachBatch(b).catch(() => undefined);
    await settle();
    // The DLQ comes back: nothing of the fenced partition is dead-lettered after the rebalance.
    t.dlq.failures = [];
    await settle();
    const attempts = t.dlq.attempts;
    expect(attempts).toBeLessThan(50);
    expect(t.dlq.letters).toEqual([]);
    expect(t.fatal).toEqual([]);
    expect(t.core.partitions.get('t', 0)?.fenced ?? true).toBe(true);
    await t.core.committer.commit();
    expect(t.commits).toHaveLength(0);
  });

  it('a write failing after its partition was revoked is left for the new owner: no dead letter, no failed task', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.core.lifecycle.set('RUNNING');
    t.writer.hold = true;
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 0)).b);
    t.core.partitions.retain({ t: [] });
    for (const p of t.writer.pending.splice(0))
      p.reject(new StoreError('write timed out', { code: 'CASSANDRA_UNAVAILABLE', retriable: true }));
    await settle();
    expect(t.dlq.attempts).toBe(0);
    expect(t.fatal).toEqual([]);
    expect(t.parts.budget.inFlight).toBe(0);
  });
});

describe('per-partition gauges', () => {
  it('a revoked partition leaves no committed-offset or lag series behind (lag summed over workers stays true)', async () => {
    const t = fakeTask({}, { committed: null, logStart: 0n, high: 10n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2', '3'], 0)).b);
    await settle();
    await t.core.committer.commit();
    const series = async () =>
      (await t.parts.metrics.registry.getMetricsAsJSON())
        .filter((m) => /adjunct_(committed_offset|consumer_lag)$/.test(m.name))
        .flatMap((m) => m.values);
    expect(await series()).toHaveLength(2);
    t.core.partitions.retain({ t: [] });
    expect(await series()).toEqual([]);
  });
});

describe("opening a partition's writer", () => {
  it('Cassandra unavailable while opening: retried with backoff and heartbeats under the stall policy, then the batch is written', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.core.lifecycle.set('RUNNING');
    t.openFailures.push(...Array.from({ length: 4 }, () => new StoreError('no host available', { code: 'CASSANDRA_UNAVAILABLE' })));
    const { b, control } = batchOf(messages(['1', '2']));
    await t.core.loop.eachBatch(b);
    await settle();
    await t.core.committer.commit();
    expect(t.openFailures).toHaveLength(0);
    expect(t.fatal).toEqual([]);
    expect(t.writer.written.map((w) => w.key)).toEqual(['k0', 'k1']);
    expect(t.committedOffset()).toBe('2');
    expect(control.heartbeats).toBeGreaterThan(0);
  });

  it('a rebalance seen while the open is retried ends it: the batch is not written and the failure goes to kafkajs to re-join', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.core.lifecycle.set('RUNNING');
    t.openFailures.push(...Array.from({ length: 40 }, () => new StoreError('no host available', { code: 'CASSANDRA_UNAVAILABLE' })));
    const { b } = batchOf(messages(['1', '2']));
    let beats = 0;
    const rebalancing = Object.assign(new Error('The group is rebalancing, so a rejoin is needed'), { type: 'REBALANCE_IN_PROGRESS' });
    b.heartbeat = () => (++beats <= 2 ? Promise.resolve() : Promise.reject(rebalancing));
    await expect(t.core.loop.eachBatch(b)).rejects.toBe(rebalancing);
    // Cassandra comes back: nothing of the batch fetched before the rebalance is written.
    t.openFailures.length = 0;
    await settle();
    await t.core.committer.commit();
    expect(t.writer.written).toEqual([]);
    expect(t.fatal).toEqual([]);
    expect(t.commits).toHaveLength(0);
  });

  it('a failure that is not an outage fails the task (WRITER_OPEN_FAILED, naming the partition) instead of throwing to kafkajs', async () => {
    const t = fakeTask({ tolerance: 'all' });
    t.openFailures.push(new Error('unexpected'));
    await expect(t.core.loop.eachBatch(batchOf(messages(['1', '2'])).b)).resolves.toBeUndefined();
    await settle();
    await t.core.committer.commit();
    expect(t.fatal.map((e) => [e.code, e.message])).toEqual([
      ['WRITER_OPEN_FAILED', 'opening the writer of t/0 failed: Error: unexpected'],
    ]);
    expect(t.core.lifecycle.failed).toBe(true);
    expect(t.writer.written).toEqual([]);
    expect(t.commits).toHaveLength(0);
    expect(t.dlq.attempts).toBe(0);
  });
});

describe('offsets that fell off the log at run time', () => {
  it('policy fail: a batch starting past the expected offset, below the log start, fails the pipeline naming the lost range', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'fail' }, { committed: 10n, logStart: 50n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 50)).b);
    expect(t.fatal[0].code).toBe('OFFSET_OUT_OF_RANGE');
    expect(t.fatal[0].message).toContain('t/0 offsets 10..49 (40 records)');
    expect(t.writer.written).toHaveLength(0);
  });

  it('policy latest: logs and counts the gap, then goes on', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'latest' }, { committed: 10n, logStart: 50n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 50)).b);
    expect(t.core.counts.lostOffsets).toBe(40);
    expect(t.writer.written).toHaveLength(2);
    expect(t.fatal).toHaveLength(0);
  });

  it('policy reload: starts a new generation (once per loss) and goes on', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'reload' }, { committed: 10n, logStart: 50n });
    await t.core.loop.eachBatch(batchOf(messages(['1'], 50)).b);
    await t.core.loop.eachBatch(batchOf(messages(['2'], 51)).b);
    expect(t.reloads()).toBe(1);
    expect(t.writer.written).toHaveLength(2);
  });

  it("policy fail: the group's position before the gap is committed back over kafkajs's reset before the task fails", async () => {
    const admin = { committed: 10n as bigint | null, logStart: 50n };
    const t = fakeTask({ onOffsetOutOfRange: 'fail' }, admin);
    await t.core.positions.snapshot(['t']);
    admin.committed = -2n; // kafkajs committed its reset to the earliest offset
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 50)).b);
    expect(t.fatal.map((e) => e.code)).toEqual(['OFFSET_OUT_OF_RANGE']);
    expect(t.fatal[0].message).toContain('t/0 offsets 10..49 (40 records)');
    expect(t.commits).toEqual([[{ topic: 't', partition: 0, offset: '10' }]]);
    await t.core.committer.commit();
    expect(t.commits).toHaveLength(1);
  });

  it('policy fail after durable records: the position after the last durable one is committed back', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'fail' }, { committed: 10n, logStart: 0n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 10)).b);
    await settle();
    await t.core.committer.commit();
    expect(t.committedOffset()).toBe('12');
    t.parts.admin.fetchTopicOffsets = async () => [{ partition: 0, offset: '0', low: '30', high: '100' }];
    await t.core.loop.eachBatch(batchOf(messages(['3'], 30)).b);
    expect(t.fatal[0].message).toContain('t/0 offsets 12..29 (18 records)');
    expect(t.commits.map((c) => c[0].offset)).toEqual(['12', '12']);
  });

  it('an expected offset past the log end (topic recreated) is out of range: policy fail stops, nothing counted lost', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'fail' }, { committed: 500n, logStart: 0n, high: 100n });
    await t.core.loop.eachBatch(batchOf(messages(['1'], 0)).b);
    expect(t.fatal[0].message).toContain('t/0 expected offset 500 is past the log end 100');
    expect(t.core.counts.lostOffsets).toBe(0);
    expect(t.writer.written).toHaveLength(0);
  });

  it('policy latest past the log end (topic recreated): the new log is committed from its own offsets, below the old position', async () => {
    const log = { committed: null, logStart: 0n, high: 100n };
    const t = fakeTask({ onOffsetOutOfRange: 'latest' }, log);
    await t.core.loop.eachBatch(
      batchOf(
        messages(
          Array.from({ length: 100 }, (_, i) => String(i)),
          0,
        ),
      ).b,
    );
    await settle();
    await t.core.committer.commit();
    expect(t.commits.at(-1)?.[0].offset).toBe('100');
    // Deleted and re-created with 5 records: kafkajs resets to the earliest offset and fetches 0..4.
    log.high = 5n;
    await t.core.loop.eachBatch(batchOf(messages(['1', '2', '3', '4', '5'], 0)).b);
    await settle();
    await t.core.committer.commit();
    expect(t.fatal).toHaveLength(0);
    expect(t.commits.at(-1)?.[0].offset).toBe('5');
    expect(t.core.status().partitions[0].committedOffset).toBe('5');
  });

  it('a batch before the expected offset inside the log (a replay after a rebalance) is not a loss', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'fail' }, { committed: 10n, logStart: 0n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 10)).b);
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 10)).b);
    expect(t.fatal).toHaveLength(0);
    expect(t.writer.written).toHaveLength(4);
  });

  it('a jump inside the log (compaction) is not a loss', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'fail' }, { committed: 10n, logStart: 0n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 50)).b);
    expect(t.fatal).toHaveLength(0);
    expect(t.core.counts.lostOffsets).toBe(0);
    expect(t.writer.written).toHaveLength(2);
  });
});

describe("kafkajs's reset (-2) found when a task starts (a task restarted after a failure or a kill)", () => {
  it('policy fail: the task fails before it consumes, naming the partition and the log start', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'fail' }, { committed: -2n as unknown as bigint, logStart: 50n, high: 60n });
    expect(await t.core.takePositions()).toBe(false);
    expect(t.fatal[0]).toMatchObject({ code: 'OFFSET_OUT_OF_RANGE', message: expect.stringContaining('t/0 group position was reset') });
  });

  it('policy latest: goes on (nothing counted: the range is unknown); reload: asks for a new generation', async () => {
    const latest = fakeTask({ onOffsetOutOfRange: 'latest' }, { committed: -2n as unknown as bigint, logStart: 50n, high: 60n });
    expect(await latest.core.takePositions()).toBe(true);
    expect({ fatal: latest.fatal, lost: latest.core.counts.lostOffsets }).toEqual({ fatal: [], lost: 0 });
    const reload = fakeTask({ onOffsetOutOfRange: 'reload' }, { committed: -2n as unknown as bigint, logStart: 50n, high: 60n });
    expect(await reload.core.takePositions()).toBe(true);
    expect(reload.reloads()).toBe(1);
  });

  it('a reset judged when the task started is not judged again when its partition is assigned', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'reload' }, { committed: -2n as unknown as bigint, logStart: 50n, high: 60n });
    expect(await t.core.takePositions()).toBe(true);
    expect(t.reloads()).toBe(1);
    await t.core.loop.eachBatch(batchOf(messages(['1'], 50)).b);
    await settle();
    expect(t.reloads()).toBe(1);
  });

  it('a group without a position (-1) or with a real one is no loss', async () => {
    for (const committed of [null, 55n]) {
      const t = fakeTask({ onOffsetOutOfRange: 'fail' }, { committed, logStart: 50n, high: 60n });
      expect(await t.core.takePositions()).toBe(true);
      expect(t.fatal).toEqual([]);
    }
  });
});

describe("kafkajs's reset (-2) found when a partition is assigned, with no position known when the task started", () => {
  /** A task that started while the group had no position for t/0; another member then met the gap and reset it. */
  async function resetAfterStart(policy: 'fail' | 'latest') {
    const admin = { committed: null as bigint | null, logStart: 50n, high: 60n };
    const t = fakeTask({ onOffsetOutOfRange: policy }, admin);
    expect(await t.core.takePositions()).toBe(true);
    admin.committed = -2n;
    return t;
  }

  it('policy fail: the first batch is not written and the task fails naming the partition', async () => {
    const t = await resetAfterStart('fail');
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 50)).b);
    await settle();
    expect(t.fatal[0]).toMatchObject({ code: 'OFFSET_OUT_OF_RANGE', message: expect.stringContaining('t/0 group position was reset') });
    expect(t.writer.written).toEqual([]);
  });

  it('policy latest: judged once against the log (never let through unjudged), then the batches from the log start are written', async () => {
    const t = await resetAfterStart('latest');
    const lookup = t.parts.admin.fetchTopicOffsets.bind(t.parts.admin);
    let lookups = 0;
    t.parts.admin.fetchTopicOffsets = (topic: string) => {
      lookups++;
      return lookup(topic);
    };
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 50)).b);
    await t.core.loop.eachBatch(batchOf(messages(['3'], 52)).b);
    await settle();
    expect(t.fatal).toEqual([]);
    expect(lookups).toBe(1);
    expect(t.writer.written).toHaveLength(3);
  });
});

describe("kafkajs's reset (-2) met by a pass-over of transaction markers and a batch together", () => {
  it('is judged once: both wait for the one decision', async () => {
    const admin = { committed: null as bigint | null, logStart: 50n, high: 60n };
    const t = fakeTask({ onOffsetOutOfRange: 'reload' }, admin);
    expect(await t.core.takePositions()).toBe(true);
    admin.committed = -2n;
    // The partition is opened (and its reset noted) before the two meet it.
    await t.core.partitions.open('t', 0);
    t.core.loop.passedOver('t', 0, '50', '50');
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 51)).b);
    await settle();
    expect(t.fatal).toEqual([]);
    expect(t.reloads()).toBe(1);
    expect(t.writer.written).toHaveLength(2);
  });
});

describe('offsets that fell off the log with no batch after the gap (reported by the progress watchdog)', () => {
  /** A task that stored offsets 10..11 (expected next: 12), whose log then lost everything up to 30. */
  async function behindTask(policy: 'fail' | 'latest') {
    const t = fakeTask({ onOffsetOutOfRange: policy }, { committed: 10n, logStart: 0n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 10)).b);
    await settle();
    let answer!: () => void;
    const lookups: number[] = [];
    t.parts.admin.fetchTopicOffsets = async () => {
      lookups.push(lookups.length);
      if (lookups.length === 1) await new Promise<void>((r) => (answer = r));
      return [{ partition: 0, offset: '0', low: '30', high: '30' }];
    };
    return { t, lookups, answer: () => answer() };
  }

  it('policy latest: counted once, and a batch arriving during the decision waits for it (not judged again)', async () => {
    const { t, lookups, answer } = await behindTask('latest');
    const judged = t.core.behindLogStart('t', 0, 30n);
    const batch = t.core.loop.eachBatch(batchOf(messages(['3'], 30)).b);
    await settle();
    expect(t.writer.written).toHaveLength(2); // the batch waits for the judgement
    answer();
    await Promise.all([judged, batch]);
    expect(t.core.counts.lostOffsets).toBe(18);
    expect(t.writer.written).toHaveLength(3);
    await t.core.behindLogStart('t', 0, 30n); // the watchdog reports again while its check still sees it: decided already
    expect(t.core.counts.lostOffsets).toBe(18);
    expect(lookups).toHaveLength(1);
  });

  it('policy fail: FAILED naming 12..29; a batch arriving meanwhile is not processed, and the position before the gap is committed', async () => {
    const { t, answer } = await behindTask('fail');
    const judged = t.core.behindLogStart('t', 0, 30n);
    const batch = t.core.loop.eachBatch(batchOf(messages(['3'], 30)).b);
    answer();
    await Promise.all([judged, batch]);
    expect(t.fatal.map((e) => e.code)).toEqual(['OFFSET_OUT_OF_RANGE']);
    expect(t.fatal[0].message).toContain('t/0 offsets 12..29 (18 records)');
    expect(t.writer.written).toHaveLength(2);
    expect(t.commits.at(-1)).toEqual([{ topic: 't', partition: 0, offset: '12' }]);
  });

  it('policy latest on a log emptied by retention (log start = end): the position at the log start is committed, so READY can be reached', async () => {
    const { t, answer } = await behindTask('latest');
    const judged = t.core.behindLogStart('t', 0, 30n);
    answer();
    await judged;
    await t.core.committer.commit();
    expect(t.committedOffset()).toBe('30');
    expect(t.fatal).toHaveLength(0);
  });

  it('a failed log look-up decides nothing: the next batch from the log start is judged', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'latest' }, { committed: 10n, logStart: 0n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'], 10)).b);
    t.parts.admin.fetchTopicOffsets = async () => {
      throw new Error('broker down');
    };
    await expect(t.core.behindLogStart('t', 0, 30n)).rejects.toThrow('broker down');
    expect(t.core.counts.lostOffsets).toBe(0);
    t.parts.admin.fetchTopicOffsets = async () => [{ partition: 0, offset: '0', low: '30', high: '31' }];
    await t.core.loop.eachBatch(batchOf(messages(['3'], 30)).b);
    expect(t.core.counts.lostOffsets).toBe(18);
  });
});

describe('transaction markers and aborted records (fetched, never handed over)', () => {
  it('a batch ending in a commit marker commits past the marker once its records are durable, and kafkajs resumes after it', async () => {
    const t = fakeTask({}, { committed: 0n });
    const { b, control } = batchOf(messages(['1', '2']), { fetched: { first: '0', last: '2' } });
    await t.core.loop.eachBatch(b);
    await settle();
    await t.core.committer.commit();
    expect(control.resolved).toEqual(['1', '2']);
    expect(t.committedOffset()).toBe('3');
    expect(t.writer.flushed).toEqual([1001]);
  });

  it('a fetch of markers only (no eachBatch) commits the position after them; the next batch is no gap', async () => {
    const t = fakeTask({}, { committed: 0n });
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'])).b);
    await settle();
    t.core.loop.passedOver('t', 0, '2', '2');
    await settle();
    await t.core.committer.commit();
    expect(t.committedOffset()).toBe('3');
    let judged = 0;
    const offsets = t.parts.admin.fetchTopicOffsets;
    t.parts.admin.fetchTopicOffsets = async (topic: string) => (judged++, offsets(topic));
    await t.core.loop.eachBatch(batchOf(messages(['4'], 3)).b);
    await settle();
    await t.core.committer.commit();
    expect(judged).toBe(0);
    expect(t.committedOffset()).toBe('4');
  });

  it('markers passed over never commit past a record still being written before them', async () => {
    const t = fakeTask({}, { committed: 0n });
    t.writer.hold = true;
    await t.core.loop.eachBatch(batchOf(messages(['1', '2'])).b);
    t.core.loop.passedOver('t', 0, '2', '5');
    await settle();
    await t.core.committer.commit();
    expect(t.commits).toHaveLength(0);
    for (const w of t.writer.pending) w.resolve('written');
    await settle();
    await t.core.committer.commit();
    expect(t.committedOffset()).toBe('6');
    expect(t.writer.flushed).toEqual([1001]);
  });

  it('a partition whose first fetch holds markers only is opened and its position committed (a store can become READY)', async () => {
    const t = fakeTask({}, { committed: 7n });
    t.core.loop.passedOver('t', 0, '7', '7');
    await settle();
    await settle();
    await t.core.committer.commit();
    expect(t.committedOffset()).toBe('8');
    expect(t.writer.flushed).toEqual([]);
  });

  it('markers fetched past a gap below the log start go to the offset-loss policy first (fail: nothing committed past it)', async () => {
    const t = fakeTask({ onOffsetOutOfRange: 'fail' }, { committed: 10n, logStart: 50n });
    t.core.loop.passedOver('t', 0, '50', '50');
    await settle();
    await settle();
    expect(t.fatal.map((e) => e.code)).toEqual(['OFFSET_OUT_OF_RANGE']);
    await t.core.committer.commit();
    expect(t.commits.flat().map((c) => c.offset)).not.toContain('51');
  });
});
