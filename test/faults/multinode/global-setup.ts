/**
 * Jest globalSetup of the multi-node fault tests: brings up (or reuses) a stack of 3 Cassandra nodes and 3 KRaft
 * brokers on 127.0.0.1–127.0.0.3 (jest.multinode.config.js sets the topology). Failure fails the run; tests never skip.
 */
import { ensureStack } from '../../../tools/devstack/stack';

/** Starts or reuses the multi-node stack; throws with the reason when it cannot be brought up. */
export default async function globalSetup(): Promise<void> {
  try {
    await ensureStack({ log: (m) => process.stderr.write(`[devstack] ${m}\n`) });
  } catch (e) {
    throw new Error(
      `multi-node tests need the multi-node stack (npm run stack:up -- --cassandra-nodes 3 --kafka-brokers 3), which failed: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}
