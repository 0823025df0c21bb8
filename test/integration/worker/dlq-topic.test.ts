/** The DLQ is a dependency: created at start when missing (configured partitions), or a clear DLQ_UNAVAILABLE naming it. */
import { AdjunctError } from '../../../src/errors';
import { createTopic } from '../helpers';
import { configDoc, names, startWorker, useStack } from './harness';

describe('worker: dead-letter topic at start (real Kafka)', () => {
  const stack = useStack();
  const pipeline = (topic: string, dlq: Record<string, unknown>) => ({
    name: 'p',
    topics: [topic],
    store: { name: 's' },
    errors: { tolerance: 'all', deadLetterQueue: dlq },
  });

  it('creates a missing DLQ topic with the configured partitions', async () => {
    const n = names('dlqcreate');
    await createTopic(stack.kafka, n.topic, 1);
    expect(await stack.admin.listTopics()).not.toContain(n.dlq);
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [pipeline(n.topic, { topic: n.dlq, partitions: 3, replicationFactor: 1 })]),
    );
    const meta = await stack.admin.fetchTopicMetadata({ topics: [n.dlq] });
    expect(meta.topics[0].partitions).toHaveLength(3);
  });

  it('refuses to start with DLQ_UNAVAILABLE naming the topic when it cannot be created', async () => {
    const n = names('dlqfail');
    await createTopic(stack.kafka, n.topic, 1);
    // One broker: a replication factor of 3 cannot be satisfied.
    const err = await startWorker(configDoc(n.keyspace, n.group, [pipeline(n.topic, { topic: n.dlq, replicationFactor: 3 })])).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AdjunctError);
    expect((err as AdjunctError).code).toBe('DLQ_UNAVAILABLE');
    expect((err as AdjunctError).message).toContain(`dead-letter topic ${n.dlq}`);
  });
});
