/**
 * Command line for the dev stack: `up [--cassandra-nodes N] [--kafka-brokers N]`, `down [--purge]`, `status`
 * (see package.json stack:* scripts).
 */
import { parseArgs } from 'util';
import { TOPOLOGY_ENV_VARS } from './endpoints';
import { ensureStack, stackStatus, stopStack } from './stack';

const USAGE = 'usage: tsx tools/devstack/cli.ts up [--cassandra-nodes N] [--kafka-brokers N] | down [--purge] | status';

/** Applies `--cassandra-nodes` / `--kafka-brokers` to the environment the stack settings are read from. */
function applyTopologyFlags(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: { 'cassandra-nodes': { type: 'string' }, 'kafka-brokers': { type: 'string' } },
    strict: true,
  });
  if (values['cassandra-nodes'] !== undefined) process.env[TOPOLOGY_ENV_VARS.cassandraNodes] = values['cassandra-nodes'];
  if (values['kafka-brokers'] !== undefined) process.env[TOPOLOGY_ENV_VARS.kafkaBrokers] = values['kafka-brokers'];
}

/** Runs one dev-stack command and returns the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'up':
      applyTopologyFlags(rest);
      await ensureStack();
      return 0;
    case 'down':
      await stopStack({ purge: rest.includes('--purge') });
      return 0;
    case 'status': {
      const all = await stackStatus();
      for (const st of all) {
        const rss = st.rssMiB !== undefined ? ` rss=${st.rssMiB}MiB` : '';
        const err = st.error ? ` (${st.error.split('\n')[0]})` : '';
        console.log(`${st.name.padEnd(12)} pid=${st.pid ?? '-'} alive=${st.alive} healthy=${st.healthy}${rss}${err}`);
      }
      return all.every((st) => st.healthy) ? 0 : 1;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
