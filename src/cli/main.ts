import '../kafka/preload';
import { Command, Option } from 'commander';
import { configJsonSchema, ConfigValidationError, configWarnings, loadConfigFile, pathToString } from '../config';
import { checkTypedColumnsAgainstRegistry } from '../converters/typed-columns-check';
import { describeError } from '../errors';
import { ExitCode, exitCodeOfError } from './exit-codes';
import { runCommand } from './run-command';
import { registerReadCommands } from './read-commands';
import { action } from './command-action';
import { schemaCommand, SchemaOpts } from './schema-command';

/** Builds the commander program (exported for tests). */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('adjunct')
    .description('Materialise Kafka changelog topics into versioned Cassandra tables (KIP-889), and look them up.')
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    .version(require('../../package.json').version)
    .showHelpAfterError()
    .option(
      '--log-level <level>',
      'log level (trace, debug, info, warn, error, fatal, silent); overrides ADJUNCT_LOG_LEVEL and worker.logLevel',
    )
    .hook('preAction', (cmd) => {
      const level = cmd.opts().logLevel as string | undefined;
      if (level !== undefined) process.env.ADJUNCT_LOG_LEVEL = level;
    });

  program
    .command('run')
    .description('run the worker: consume the configured pipelines into their stores')
    .requiredOption('-c, --config <file>', 'pipelines YAML')
    .addOption(new Option('--no-http', 'do not start the HTTP API'))
    .action(async (o: { config: string; http: boolean }) => {
      const http = o.http ? (await import('../http/server')).httpStarter : undefined;
      const code = await runCommand(o.config, { http });
      // Exit explicitly: a client library timer must never keep a stopped worker alive (bounded shutdown).
      setTimeout(() => process.exit(code), 200).unref();
      process.exitCode = code;
    });

  program
    .command('validate')
    .description('validate a config file (every problem with its YAML path and line); connects to nothing unless --registry')
    .requiredOption('-c, --config <file>', 'pipelines YAML')
    .option('--json', 'machine-readable output')
    .option('--registry', 'also check typed-column mappings against the latest schemas in the registry')
    .action(async (o: { config: string; json?: boolean; registry?: boolean }) => {
      try {
        const { config } = loadConfigFile(o.config);
        const misfits = o.registry ? await checkTypedColumnsAgainstRegistry(config) : [];
        if (misfits.length > 0) throw new ConfigValidationError(misfits, o.config);
        const warnings = configWarnings(config).map((w) => ({ path: pathToString(w.path), message: w.message }));
        if (o.json) console.log(JSON.stringify({ valid: true, pipelines: config.pipelines.map((p) => p.name), warnings }));
        else {
          console.log(`${o.config}: valid (${config.pipelines.length} pipeline(s): ${config.pipelines.map((p) => p.name).join(', ')})`);
          for (const w of warnings) console.error(`warning: ${w.path}: ${w.message}`);
        }
        process.exitCode = ExitCode.OK;
      } catch (e) {
        if (o.json)
          console.log(
            JSON.stringify({
              valid: false,
              problems: e instanceof ConfigValidationError ? e.problems : [{ path: '', message: describeError(e) }],
            }),
          );
        else console.error((e as Error).message);
        process.exitCode = ExitCode.CONFIG_INVALID;
      }
    });

  program
    .command('config-schema')
    .description('print the configuration JSON Schema (for editor autocompletion)')
    .action(() => {
      console.log(JSON.stringify(configJsonSchema(), null, 2));
    });

  program
    .command('schema')
    .description(
      "create the config's keyspace (if cassandra.autoCreate), catalog and store tables as a starting worker would, then exit (schema changes ahead of a deployment)",
    )
    .requiredOption('-c, --config <file>', 'pipelines YAML')
    .option('--json', 'machine-readable output')
    .action(action((o: SchemaOpts) => schemaCommand(o)));

  registerReadCommands(program);
  return program;
}

/** CLI entry point: parses argv and runs the command; exit codes are documented in exit-codes.ts. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (e) {
    console.error(`adjunct: ${describeError(e)}`);
    process.exitCode = exitCodeOfError(e);
  }
}

if (require.main === module) void main(process.argv);
