/**
 * Generations coordinated across worker processes on the single-node stack: three workers, a reload started on one
 * of them mid-load, which every worker joins; another worker killed -9 during the build; the switch followed by every
 * worker; a rollback to the previous generation (idempotent); then the keep time expiring: the previous table is marked
 * dropping and dropped only once no live worker writes it, the current generation equals the in-memory reference and
 * nothing was dead-lettered. The scenario itself is shared with the multi-node fault test (generations-scenario.ts).
 */
import { createTopic } from '../helpers';
import { useStack } from './harness';
import { runGenerationsScenario } from './generations-scenario';
import { note, workerDoc } from '../../faults/lib';

jest.setTimeout(400_000);

describe('generations followed by every worker', () => {
  const stack = useStack();

  it('reload joined by all, a worker killed -9 mid-build, switch, rollback --to, keep time: nothing lost, no table dropped under a writer', async () => {
    const out = await runGenerationsScenario(stack, {
      prefix: 'gens',
      records: 30_000,
      keys: 800,
      createTopic: (n) => createTopic(stack.kafka, n.topic, 4),
      workerDoc,
    });
    note(`generations: ${JSON.stringify(out)}`);
  });
});
