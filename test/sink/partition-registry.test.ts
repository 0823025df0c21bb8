import { createLogger } from '../../src/observability/logger';
import { PartitionRegistry } from '../../src/sink/partition-registry';
import { FakeWriter } from './fakes';

/** A kafkajs-shaped error (kafkajs marks transient ones `retriable`). */
function kafkaError(name: string, retriable: boolean): Error {
  return Object.assign(new Error(`${name} happened`), { name, retriable });
}

describe('PartitionRegistry: opening a partition', () => {
  it('a failed committed-offset look-up fails the open (retriable when Kafka is), closes the writer, and a retry opens it', async () => {
    const closed: FakeWriter[] = [];
    const writers = {
      open: async () => {
        const w = new FakeWriter();
        w.close = async () => void closed.push(w);
        return w;
      },
    };
    const answers: (() => Promise<bigint | null>)[] = [
      () => Promise.reject(kafkaError('KafkaJSConnectionError', true)),
      () => Promise.resolve(42n),
    ];
    const registry = new PartitionRegistry(writers, () => answers.shift()!(), createLogger('silent'));
    await expect(registry.open('t', 3)).rejects.toMatchObject({ code: 'KAFKA_UNAVAILABLE', retriable: true, stage: 'consume' });
    expect(closed).toHaveLength(1);
    expect(registry.get('t', 3)).toBeUndefined();
    // The first batch is checked against the group's position: the open never goes on without it.
    const st = await registry.open('t', 3);
    expect(st.expectedNext).toBe(42n);
    expect(closed).toHaveLength(1);
  });

  it('a look-up refused for good (not retriable) fails the open as not retriable', async () => {
    const registry = new PartitionRegistry(
      { open: async () => new FakeWriter() },
      () => Promise.reject(kafkaError('KafkaJSProtocolError', false)),
      createLogger('silent'),
    );
    await expect(registry.open('t', 0)).rejects.toMatchObject({ code: 'KAFKA_UNAVAILABLE', retriable: false });
  });

  it('a writer that fails to open fails the open with its own error', async () => {
    const boom = new Error('stream time read failed');
    const registry = new PartitionRegistry({ open: () => Promise.reject(boom) }, async () => 5n, createLogger('silent'));
    await expect(registry.open('t', 0)).rejects.toBe(boom);
  });

  it('a partition revoked while its writer opened is fenced, closed and never owned (nothing of it is written or committed)', async () => {
    let opened!: () => void;
    const writer = new FakeWriter();
    let closed = 0;
    writer.close = async () => void closed++;
    const registry = new PartitionRegistry(
      { open: () => new Promise((r) => (opened = () => r(writer))) },
      async () => 5n,
      createLogger('silent'),
    );
    registry.retain({ t: [0, 1] });
    const opening = registry.open('t', 1);
    registry.retain({ t: [0] });
    opened();
    const st = await opening;
    expect(st.fenced).toBe(true);
    expect(closed).toBe(1);
    expect(registry.get('t', 1)).toBeUndefined();
    expect(registry.all()).toHaveLength(0);
  });
});
