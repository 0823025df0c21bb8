import { loadReadConfigFile } from '../config';
import { CliFailure } from './cli-failure';
import { ExitCode } from './exit-codes';

/** Options of `adjunct serve`. */
export interface ServeOpts {
  config: string;
  port?: string;
  host?: string;
}

/** `adjunct serve`: the read-only HTTP API from Cassandra, without a worker, until SIGINT or SIGTERM. */
export async function serveCommand(o: ServeOpts): Promise<void> {
  const cfg = loadReadConfigFile(o.config).config;
  const port = o.port === undefined ? cfg.worker.http.port : Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliFailure(`invalid --port ${o.port}`, ExitCode.CONFIG_INVALID);
  const settings = { ...cfg.worker.http, host: o.host ?? cfg.worker.http.host, port };
  const { createLogger } = await import('../observability/logger');
  const { createCassandra } = await import('../worker/clients');
  const { openLookup } = await import('../lookup');
  const { buildHttpServer, checkHttpSettings, listen } = await import('../http/server');
  checkHttpSettings(settings);
  const logger = createLogger(cfg.worker.logLevel);
  const client = createCassandra(cfg.cassandra);
  try {
    const lookup = await openLookup({ client, keyspace: cfg.cassandra.keyspace, readConsistency: cfg.cassandra.readConsistency });
    const expectedPipelines = cfg.pipelines.filter((p) => p.bootstrap).map((p) => p.name);
    const app = await buildHttpServer({ lookup, config: settings, logger, expectedPipelines });
    const address = await listen(app, settings);
    process.stdout.write(`adjunct serve: read-only HTTP API listening on ${address}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await app.close();
    await lookup.close();
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}
