import { AdjunctError, asAdjunctError } from '../errors';
import { isRejoinError } from '../kafka/kafka-retry';
import { FetchedBatch } from './batch-control';
import { ErrorHandler } from './error-handler';
import { PartitionRegistry } from './partition-registry';
import type { PartitionState } from './partition-state';
import { TaskLifecycle } from './task-lifecycle';

/** What opening a partition's writer uses: the task's partitions, its retries under the stall policy, its lifecycle. */
export interface PartitionOpeningParts {
  partitions: PartitionRegistry;
  errors: ErrorHandler;
  lifecycle: TaskLifecycle;
}

/**
 * The partition's state, opening its writer on the first batch. Opening reads Cassandra (stream time, typed
 * columns, the registry): an unavailable dependency is retried with backoff and heartbeats under the stall policy,
 * like a write; anything else fails the task with the error (never left to kafkajs's batch retries and consumer
 * restarts). Null when the task stopped meanwhile.
 */
export async function openPartitionFor(b: FetchedBatch, p: PartitionOpeningParts): Promise<PartitionState | null> {
  const { topic, partition } = b.batch;
  // A heartbeat of the open's retries that finds the group rebalancing ends them: the partition may have a new owner
  // by the time Cassandra answers, so the batch is not written; the failure goes to kafkajs, which re-joins on it.
  let rejoin: unknown;
  const heartbeat = () =>
    b.heartbeat().catch((e: unknown) => {
      if (isRejoinError(e)) rejoin ??= e;
      throw e;
    });
  let st: PartitionState;
  try {
    st = await p.errors.retry(
      null,
      () => p.partitions.open(topic, partition),
      'write',
      heartbeat,
      () => rejoin !== undefined,
    );
  } catch (e) {
    if (rejoin !== undefined) throw rejoin;
    if (!p.lifecycle.accepting) return null;
    p.lifecycle.fail(
      asAdjunctError(
        e,
        (message, cause) =>
          new AdjunctError(`opening the writer of ${topic}/${partition} failed: ${message}`, {
            code: 'WRITER_OPEN_FAILED',
            stage: 'write',
            cause,
            context: { topic, partition },
          }),
        'write',
      ),
    );
    return null;
  }
  if (rejoin !== undefined) {
    st.fenced = true;
    st.fencedBy = rejoin;
    throw rejoin;
  }
  return st;
}
