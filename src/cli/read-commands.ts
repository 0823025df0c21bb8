import { Command, Option } from 'commander';
import { adminCommand, AdminOpts } from './admin-command';
import { action } from './command-action';
import { lookupCommand, LookupOpts } from './lookup-command';
import { serveCommand, ServeOpts } from './serve-command';
import { statusCommand, StatusOpts } from './status-command';
import { DEFAULT_URL } from './worker-api';

/** Registers status/lookup/reload/rollback/pause/resume/serve (implemented with the lookup library and the HTTP API). */
export function registerReadCommands(program: Command): void {
  const urlOption = () => new Option('--url <url>', "base URL of a running worker's HTTP API").default(DEFAULT_URL);

  program
    .command('status')
    .description("show worker/pipeline status: from a running worker (--url), or from Cassandra's catalog and status tables (--config)")
    .addOption(urlOption())
    .option('-c, --config <file>', 'read the catalog and bootstrap status from Cassandra instead of a worker')
    .option('--json', 'machine-readable output')
    .action(action((o: StatusOpts) => statusCommand(o)));

  program
    .command('lookup <store> <key>')
    .description(
      "read a key (latest, --as-of, or --history); the key is text per the store's key serde (int64 as integer, json/tuple as JSON)",
    )
    .requiredOption('-c, --config <file>', 'config with the Cassandra settings (a config holding only `cassandra` is enough)')
    .option('--as-of <time>', 'the version valid at this time (epoch ms or ISO-8601)')
    .option('--no-valid-to', "with --as-of: skip the version's validTo (one Cassandra read instead of two)")
    .option('--history', 'every version valid in [--from, --to]')
    .option('--from <time>', 'history lower bound (epoch ms or ISO-8601)')
    .option('--to <time>', 'history upper bound (epoch ms or ISO-8601)')
    .addOption(new Option('--order <order>', 'history order (default desc: newest first)').choices(['asc', 'desc']))
    .option('--partition <n>', 'partitioned stores: read only this source partition')
    .option('--json', 'machine-readable output')
    .action(action((store: string, key: string, o: LookupOpts) => lookupCommand(store, key, o)));

  for (const [name, description] of [
    ['reload', "rebuild a pipeline's store into a new generation from the earliest offset (readers switch when READY)"],
    ['rollback', "switch a pipeline's store back to generation --to (its previous one); idempotent"],
    ['pause', "pause a pipeline's consumption"],
    ['resume', 'resume a paused pipeline'],
    ['restart', 'restart a FAILED pipeline in place (the worker keeps running)'],
  ] as const) {
    program
      .command(`${name} <pipeline>`)
      .description(`${description} (admin API of a running worker)`)
      .addOption(new Option('--url <url>', `base URL of a running worker's HTTP API (default: worker.http of -c, else ${DEFAULT_URL})`))
      .option('-c, --config <file>', "the worker's config: its worker.http host, port, tls and adminToken locate and authorise the call")
      .addOption(new Option('--token <token>', 'admin bearer token (default: worker.http.adminToken of -c)').env('ADJUNCT_ADMIN_TOKEN'))
      .option(
        '--catalog',
        'reload/rollback/pause/resume: act in the Cassandra catalog of -c directly (no worker needed; every worker follows within worker.generationPoll)',
      )
      .option('--json', 'machine-readable output')
      .option('--to <generation>', 'rollback: the generation to make current (required for rollback)')
      .action(action((pipeline: string, o: AdminOpts) => adminCommand(name, pipeline, o)));
  }

  program
    .command('serve')
    .description('serve the read-only HTTP API (stores, readiness, status) from Cassandra, without running a worker')
    .requiredOption('-c, --config <file>', 'config with the Cassandra and worker.http settings')
    .option('-p, --port <port>', 'port (default worker.http.port)')
    .option('--host <host>', 'bind host (default worker.http.host)')
    .action(action((o: ServeOpts) => serveCommand(o)));
}
