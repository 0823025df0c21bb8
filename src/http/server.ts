import type { FastifyInstance } from 'fastify';
import type { HttpStarter } from '../cli/run-command';
import { AdjunctError } from '../errors';
import { openLookup } from '../lookup';
import { buildHttpServer, checkHttpSettings } from './build-server';
import { HttpSettings } from './types';

export { buildHttpServer, checkHttpSettings } from './build-server';
export type { HttpServerOptions, HttpSettings, HttpWorker, AdminRunner } from './types';

/** Listens on the configured host/port; returns the bound address. */
export async function listen(app: FastifyInstance, settings: HttpSettings): Promise<string> {
  return app.listen({ host: settings.host, port: settings.port });
}

/** Starts the HTTP API next to a running worker (reads share the worker's Cassandra client). */
export const httpStarter: HttpStarter = async (worker) => {
  const settings = worker.config.worker.http;
  if (!settings.enabled) return undefined;
  checkHttpSettings(settings);
  const client = worker.cassandraClient;
  if (!client)
    throw new AdjunctError('the worker has no Cassandra client; start it before the HTTP API', {
      code: 'WORKER_NOT_STARTED',
      stage: 'lookup',
    });
  const lookup = await openLookup({
    client,
    keyspace: worker.config.cassandra.keyspace,
    readConsistency: worker.config.cassandra.readConsistency,
  });
  try {
    const app = await buildHttpServer({ worker, lookup, config: settings, logger: worker.logger });
    const address = await listen(app, settings);
    return {
      address,
      close: async () => {
        await app.close();
        await lookup.close();
      },
    };
  } catch (e) {
    await lookup.close();
    throw e;
  }
};
