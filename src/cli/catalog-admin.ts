import { loadConfigFile } from '../config';
import { AdjunctError } from '../errors';

/** An admin action on a pipeline's generations. */
export type AdminAction = 'reload' | 'rollback' | 'pause' | 'resume';

/**
 * Performs an admin action directly in the catalog (no worker needed): every worker of the group follows it at its
 * next catalog poll (worker.generationPoll), and workers started later read it at start.
 */
export async function catalogAdmin(
  configFile: string,
  actionName: AdminAction,
  pipeline: string,
  to?: number,
): Promise<Record<string, unknown>> {
  const cfg = loadConfigFile(configFile).config;
  const spec = cfg.pipelines.find((p) => p.name === pipeline);
  if (!spec) throw new AdjunctError(`unknown pipeline ${pipeline} in ${configFile}`, { code: 'UNKNOWN_PIPELINE', stage: 'config' });
  const { createCassandra } = await import('../worker/clients');
  const { ensureCatalog } = await import('../catalog');
  const { Generations } = await import('../generations');
  const client = createCassandra(cfg.cassandra);
  try {
    await client.connect();
    await ensureCatalog(client, cfg.cassandra.keyspace);
    const g = new Generations(client, cfg.cassandra.keyspace, cfg.worker.generationPoll);
    const store = spec.store.name;
    switch (actionName) {
      case 'reload':
        return { pipeline, action: actionName, building: await g.begin(store) };
      case 'rollback':
        if (to === undefined) throw new AdjunctError('rollback needs --to <generation>', { code: 'CONFIG_INVALID', stage: 'config' });
        return { pipeline, action: actionName, ...(await g.rollbackTo(store, to, spec.keepPreviousGeneration)) };
      case 'pause':
      case 'resume':
        await g.setPaused(pipeline, actionName === 'pause');
        return { pipeline, action: actionName, state: actionName === 'pause' ? 'PAUSED' : 'RUNNING' };
    }
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

/** True when `configFile` is a full worker config naming `pipeline` (so its catalog can take the action). */
export function hasPipeline(configFile: string, pipeline: string): boolean {
  try {
    return loadConfigFile(configFile).config.pipelines.some((p) => p.name === pipeline);
  } catch {
    return false;
  }
}
