import { Consumer } from 'kafkajs';
import { AdjunctError } from '../errors';
import { OffsetCommit } from './offset-committer';

/** The part of a kafkajs consumer a confirmed commit uses. */
export type CommittingConsumer = Pick<Consumer, 'commitOffsets' | 'on' | 'events'>;

/**
 * Commits through a kafkajs consumer and resolves only when kafkajs reports the commit sent (its COMMIT_OFFSETS event).
 * kafkajs's `commitOffsets` resolves without sending anything while its runner is not running — after a consumer crash,
 * until the restarted consumer has rejoined the group — so a resolved call alone does not mean the group's position
 * moved; such a commit fails (KAFKA_UNAVAILABLE, retriable) and the next one sends the same offsets again.
 */
export function confirmedCommit(consumer: CommittingConsumer): (offsets: OffsetCommit) => Promise<void> {
  let sent = 0;
  consumer.on(consumer.events.COMMIT_OFFSETS, () => {
    sent++;
  });
  return async (offsets) => {
    const before = sent;
    await consumer.commitOffsets(offsets);
    if (sent === before)
      throw new AdjunctError('offset commit not sent: the Kafka consumer is not running (kafkajs is restarting it or rejoining)', {
        code: 'KAFKA_UNAVAILABLE',
        stage: 'commit',
        context: { partitions: offsets.map((o) => `${o.topic}-${o.partition}`) },
      });
  };
}
