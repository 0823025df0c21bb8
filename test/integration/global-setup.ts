/**
 * Jest globalSetup for the integration project: brings the local stack up (or reuses it). Failure fails the run; tests never skip.
 */
import { ensureStack } from '../../tools/devstack/stack';
import { recordSocketOrigins } from '../open-sockets';
import { recordLateWork } from '../late-work';

/** Starts or reuses Kafka, Cassandra and the schema registry; throws with the reason when they cannot be brought up. */
export default async function globalSetup(): Promise<void> {
  recordSocketOrigins();
  recordLateWork();
  try {
    await ensureStack({ log: (m) => process.stderr.write(`[devstack] ${m}\n`) });
  } catch (e) {
    throw new Error(
      `integration tests need the local stack (npm run stack:up), which failed: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}
