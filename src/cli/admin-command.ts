import { AdminAction, catalogAdmin, hasPipeline } from './catalog-admin';
import { CliFailure } from './cli-failure';
import { ExitCode } from './exit-codes';
import { printJson } from './output';
import { adminTarget, callApi } from './worker-api';

/** Options of the admin commands (reload, rollback, pause, resume, restart). */
export interface AdminOpts {
  url?: string;
  token?: string;
  config?: string;
  json?: boolean;
  to?: string;
  catalog?: boolean;
}

/** An admin command: a catalog action, or restart (which only a running worker can do). */
export type AdminCommand = AdminAction | 'restart';

/**
 * Sends an admin action to a worker's API; with --catalog, or with -c when no worker answers, performs it in the
 * Cassandra catalog directly (reload/rollback/pause/resume): every worker follows the catalog within worker.generationPoll.
 */
export async function adminCommand(actionName: AdminCommand, pipeline: string, o: AdminOpts): Promise<void> {
  const to = o.to === undefined ? undefined : Number(o.to);
  if (actionName === 'rollback' && (to === undefined || !Number.isInteger(to) || to < 1))
    throw new CliFailure('rollback needs --to <generation> (a positive integer)', ExitCode.FAILED);
  let res: Record<string, unknown>;
  if (o.catalog && actionName !== 'restart') {
    if (!o.config) throw new CliFailure('--catalog needs -c <config>', ExitCode.FAILED);
    res = await catalogAdmin(o.config, actionName, pipeline, to);
  } else {
    res = await sendToWorker(actionName, pipeline, to, o);
  }
  if (o.json) return printJson(res);
  process.stdout.write(`${outcomeText(actionName, pipeline, res)}\n`);
}

/** POSTs the action to the worker; when none answers and -c names the pipeline, acts in the catalog instead. */
async function sendToWorker(
  actionName: AdminCommand,
  pipeline: string,
  to: number | undefined,
  o: AdminOpts,
): Promise<Record<string, unknown>> {
  const target = adminTarget(o);
  try {
    return (await callApi(
      target.url,
      'POST',
      `pipelines/${encodeURIComponent(pipeline)}/${actionName}`,
      target.token,
      actionName === 'rollback' ? { to } : undefined,
    )) as Record<string, unknown>;
  } catch (e) {
    const config = o.config;
    const workerDown = e instanceof CliFailure && e.exitCode === ExitCode.UNAVAILABLE;
    if (!(workerDown && config && !o.url && actionName !== 'restart' && hasPipeline(config, pipeline))) throw e;
    process.stderr.write(`adjunct: no worker answers at ${target.url}; ${actionName} done in the catalog, which every worker follows\n`);
    return catalogAdmin(config, actionName, pipeline, to);
  }
}

/** What the action did, in one line. */
function outcomeText(actionName: AdminCommand, pipeline: string, res: Record<string, unknown>): string {
  switch (actionName) {
    case 'reload':
      return `${pipeline}: building generation ${String(res.building)} from the earliest offset; every worker joins it; readers switch when it is READY`;
    case 'rollback':
      return res.changed === false
        ? `${pipeline}: generation ${String(res.current)} already current; nothing changed`
        : `${pipeline}: rolled back to generation ${String(res.current)} (generation ${String(res.previous)} kept as previous)`;
    case 'restart':
      return `${pipeline}: restarted (state ${String(res.state)})`;
    default:
      return `${pipeline}: ${actionName}d (state ${String(res.state)})`;
  }
}
