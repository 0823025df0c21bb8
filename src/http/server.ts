import type { FastifyInstance } from 'fastify';
import type { HttpStarter } from '../cli/run-command';
import { AdjunctError } from '../errors';
import { openLookup } from '../lookup';
import { buildHttpServer, checkHttpSettings } from './build-server';
import { DeferredLookup } from './lookup-source';
import { HttpSettings } from './types';

export { buildHttpServer, checkHttpSettings } from './build-server';
export type { HttpServerOptions, HttpSettings, HttpWorker, AdminRunner, LookupSource } from './types';

/** Listens on the configured host/port; returns the bound address. */
export async function listen(app: FastifyInstance, settings: HttpSettings): Promise<string> {
  return app.listen({ host: settings.host, port: settings.port });
}

/**
 * Starts the HTTP API next to a worker, before or after its start: it listens at once (health, readiness, status and
 * metrics answer while the worker waits for Cassandra or Kafka); reads answer 503 WORKER_NOT_STARTED until `attach()`,
 * called once the worker runs, opens their Lookup on the worker's Cassandra client. A running worker is attached here.
 */
export const httpStarter: HttpStarter = async (worker) => {
  const settings = worker.config.worker.http;
  if (!settings.enabled) return undefined;
  checkHttpSettings(settings);
  const reads = new DeferredLookup();
  const attach = async (): Promise<void> => {
    if (reads.isSet) return;
    const client = worker.cassandraClient;
    if (!client || worker.state !== 'RUNNING')
      throw new AdjunctError('the worker is not running; attach the HTTP API after its start', {
        code: 'WORKER_NOT_STARTED',
        stage: 'lookup',
      });
    reads.set(
      await openLookup({ client, keyspace: worker.config.cassandra.keyspace, readConsistency: worker.config.cassandra.readConsistency }),
    );
  };
  const app = await buildHttpServer({ worker, lookup: reads.source, config: settings, logger: worker.logger });
  try {
    const address = await listen(app, settings);
    if (worker.state === 'RUNNING') await attach();
    return {
      address,
      attach,
      close: async () => {
        await app.close();
        await reads.close();
      },
    };
  } catch (e) {
    await app.close().catch(() => undefined);
    await reads.close().catch(() => undefined);
    throw e;
  }
};
