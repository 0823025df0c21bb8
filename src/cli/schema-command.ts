import * as os from 'os';
import { loadConfigFile } from '../config';
import { printJson, table } from './output';

/** Options of `adjunct schema`. */
export interface SchemaOpts {
  config: string;
  json?: boolean;
}

/**
 * `adjunct schema`: applies the config's Cassandra schema (keyspace, catalog, store tables) the way a starting worker
 * would, then exits; workers started afterwards find it in place.
 */
export async function schemaCommand(o: SchemaOpts): Promise<void> {
  const { config } = loadConfigFile(o.config);
  const { applySchema } = await import('../worker/store-setup');
  const out = await applySchema(config, `schema-${os.hostname()}-${process.pid}`);
  for (const s of out.stores.filter((x) => x.state === 'lost'))
    process.stderr.write(
      `adjunct: store ${s.store}: table ${s.table} of the current generation is gone (dropped outside adjunct); it is not re-created empty: a worker rebuilds the store as a new generation from the earliest offsets\n`,
    );
  if (o.json) return printJson(out);
  process.stdout.write(
    `keyspace ${out.keyspace}: catalog ready\n${table(
      out.stores.map((s) => ({ ...s })),
      ['pipeline', 'store', 'generation', 'table', 'state'],
    )}\n`,
  );
}
