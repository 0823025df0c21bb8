/** The shared body of the multi-node kill tests: a ring node killed under load, then the ring restored. */
import * as fs from 'fs';
import * as path from 'path';
import { Admin } from 'kafkajs';
import { committedOffsets, eventually, StackFixture, waitCaughtUp } from '../../integration/worker/harness';
import { killWorker } from '../../integration/worker/processes';
import { note, sampleCommitted, totalOf, waitOutput } from '../lib';
import { killNode, longestCommitGap, nodeRunning, restoreStack, startRingWorkerUnderLoad } from './ring';

/** A ring node killed under load; the same worker finished the whole load with the node still dead. */
export type KilledUnderLoad = Awaited<ReturnType<typeof startRingWorkerUnderLoad>> & {
  /** The killed node (`cassandra-N` or `kafka-N`). */
  victim: string;
  killedAt: number;
  caughtUpAt: number;
  /** Longest pause between commit advances after the kill, in ms (reported, never asserted). */
  commitGapMs: number;
};

/**
 * Starts a ring worker under load, kills the node `pickVictim` names (`why` says why it was chosen, for the report),
 * and waits until the same worker commits past the kill and catches up with the whole load; asserts the node is still
 * dead and the worker still running. The worker's whole output is saved under `.ring-logs/` (passed or failed).
 */
export async function killNodeUnderLoad(
  stack: StackFixture,
  prefix: string,
  size: Parameters<typeof startRingWorkerUnderLoad>[2],
  pickVictim: (admin: Admin, topic: string) => Promise<string> | string,
  why = '',
): Promise<KilledUnderLoad> {
  const run = await startRingWorkerUnderLoad(stack, prefix, size);
  try {
    return await killUnderLoad(stack, run, pickVictim, why);
  } finally {
    const file = path.resolve(__dirname, '../../../.ring-logs', `${prefix}-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, run.w.output());
    note(`worker output saved to ${file}`);
  }
}

/** The kill and the wait for the same worker to commit past it and catch up. */
async function killUnderLoad(
  stack: StackFixture,
  run: Awaited<ReturnType<typeof startRingWorkerUnderLoad>>,
  pickVictim: (admin: Admin, topic: string) => Promise<string> | string,
  why: string,
): Promise<KilledUnderLoad> {
  const { n, group, w, records, load, sent } = run;
  const { admin } = stack;
  const victim = await pickVictim(admin, n.topic);
  const sampler = sampleCommitted(admin, group, n.topic, 250);

  const atKill = totalOf(await committedOffsets(admin, group, n.topic));
  const killedAt = Date.now();
  await killNode(victim);
  note(`killed ${victim}${why ? ` (${why})` : ''} with ${atKill} committed, ${sent()}/${records.length} produced`);

  await eventually(async () => totalOf(await committedOffsets(admin, group, n.topic)) > atKill, 180_000, 'commits after the kill').catch(
    (e: unknown) => {
      // For the report: what the worker did after the kill (kafkajs restarting its consumer repeats one line many times).
      const lines = w.output().split('\n');
      note(
        `worker output (last 60 of ${lines.length} lines, commit failures left out):\n${lines
          .filter((l) => !/commit failed/.test(l))
          .slice(-60)
          .join('\n')}`,
      );
      throw e;
    },
  );
  await load;
  await waitCaughtUp(admin, group, n.topic, 300_000);
  const caughtUpAt = Date.now();
  await sampler.stop();
  expect(nodeRunning(victim)).toBe(false);
  expect(w.child.exitCode).toBeNull();
  return { ...run, victim, killedAt, caughtUpAt, commitGapMs: longestCommitGap(sampler.samples, killedAt, caughtUpAt) };
}

/** Restores the ring (the victim runs again), then a restarted worker catches up and stops cleanly on SIGTERM. */
export async function restoreAndFinish(stack: StackFixture, run: KilledUnderLoad, what: string): Promise<void> {
  note(`restarted the ${what} in ${await restoreStack()} ms`);
  expect(nodeRunning(run.victim)).toBe(true);
  const w2 = stack.spawn(run.file);
  await waitOutput(w2, /worker running/);
  await waitCaughtUp(stack.admin, run.group, run.n.topic, 120_000);
  await killWorker(w2, 'SIGTERM');
  expect((await w2.exited).code).toBe(0);
}
