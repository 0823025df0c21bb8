/**
 * Command line for the dev stack: `up`, `down [--purge]`, `status` (see package.json stack:* scripts).
 */
import { ensureStack, stackStatus, stopStack } from './stack';

const USAGE = 'usage: tsx tools/devstack/cli.ts up | down [--purge] | status';

/** Runs one dev-stack command and returns the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'up':
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
        console.log(`${st.name.padEnd(10)} pid=${st.pid ?? '-'} alive=${st.alive} healthy=${st.healthy}${rss}${err}`);
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
