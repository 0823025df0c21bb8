import type { StoreInfo, StoreLookup } from '../lookup';
import { parseTimeText } from '../lookup/time-text';
import { CliFailure } from './cli-failure';
import { ExitCode } from './exit-codes';
import { iso, printJson, table } from './output';
import { withLookup } from './read-session';

/** Options of `adjunct lookup`. */
export interface LookupOpts {
  config: string;
  asOf?: string;
  /** False with --no-valid-to: an as-of read without the version's validTo (one read). */
  validTo?: boolean;
  history?: boolean;
  from?: string;
  to?: string;
  order?: 'asc' | 'desc';
  partition?: string;
  json?: boolean;
}

/** A store pinned to one generation, with the key the command was given (parsed per the store's key serde). */
interface KeyRead {
  store: StoreLookup<unknown, unknown>;
  info: StoreInfo;
  key: unknown;
  keyText: string;
  partition: number | undefined;
}

/** `adjunct lookup`: the key's version as of a time (latest by default), or its history with --history (KIP-968). */
export async function lookupCommand(storeName: string, keyText: string, o: LookupOpts): Promise<void> {
  const { parseKeyText } = await import('../lookup');
  const partition = o.partition === undefined ? undefined : Number(o.partition);
  if (partition !== undefined && !Number.isInteger(partition)) throw new CliFailure(`invalid --partition ${o.partition}`, ExitCode.FAILED);
  await withLookup(o.config, async (l) => {
    const store = await l.store(storeName).pinned();
    const info = await store.info();
    const read: KeyRead = { store, info, key: parseKeyText(info.keySerde, keyText), keyText, partition };
    if (o.history) return history(read, o);
    return asOf(read, o);
  });
}

/** Every version valid in [--from, --to], in --order; NOT_FOUND when there is none. */
async function history(r: KeyRead, o: LookupOpts): Promise<void> {
  const { toJsonValue } = await import('../lookup');
  const window = { fromTime: optionalTime(o.from), toTime: optionalTime(o.to), order: o.order };
  const versions = await r.store.history(r.key, window, { partition: r.partition });
  const rows = versions.map((v) => ({
    timestamp: v.timestamp,
    validTo: v.validTo,
    validFrom: iso(v.timestamp),
    validUntil: iso(v.validTo),
    value: toJsonValue(v.value),
  }));
  if (o.json)
    printJson({
      store: r.info.name,
      key: toJsonValue(r.key),
      generation: r.info.generation,
      versions: rows.map(({ validFrom: _f, validUntil: _u, ...row }) => row),
    });
  else process.stdout.write(`${table(rows, ['validFrom', 'validUntil', 'timestamp', 'validTo', 'value'])}\n`);
  if (versions.length === 0)
    throw new CliFailure(`no versions of key ${JSON.stringify(r.keyText)} in store ${r.info.name} in that window`, ExitCode.NOT_FOUND);
}

/** The version valid at --as-of (the latest without it), with its validity interval; NOT_FOUND says why. */
async function asOf(r: KeyRead, o: LookupOpts): Promise<void> {
  const { toJsonValue } = await import('../lookup');
  const at = optionalTime(o.asOf);
  const withValidTo = o.validTo !== false;
  const rec = await r.store.get(r.key, at, { partition: r.partition, validTo: withValidTo });
  if (rec === null) throw new CliFailure(await notFoundMessage(r, at), ExitCode.NOT_FOUND);
  const out = {
    store: r.info.name,
    key: toJsonValue(r.key),
    value: toJsonValue(rec.value),
    timestamp: rec.timestamp,
    validTo: rec.validTo,
    generation: r.info.generation,
  };
  if (o.json) return printJson(out);
  // Without validTo an as-of answer cannot tell whether it is the latest version.
  const latestKnown = withValidTo || at === undefined;
  let until = latestKnown ? ' (the latest version)' : '';
  if (rec.validTo !== undefined) until = ` until ${rec.validTo} (${iso(rec.validTo)})`;
  const when = rec.timestamp === undefined ? '' : `valid from ${rec.timestamp} (${iso(rec.timestamp)})${until}\n`;
  process.stdout.write(
    `${r.info.name} [${r.info.kind}, generation ${r.info.generation}] ${r.keyText}\n${when}${JSON.stringify(out.value, null, 2)}\n`,
  );
}

/** Why a lookup found nothing; names the retention horizon when the as-of time lies below that of the key's partition. */
async function notFoundMessage(r: KeyRead, asOfTime: number | undefined): Promise<string> {
  const base = `key ${JSON.stringify(r.keyText)} not found in store ${r.info.name}`;
  if (asOfTime === undefined) return base;
  const at = `${base} as of ${asOfTime} (${iso(asOfTime)})`;
  if ((await r.store.info()).kind !== 'versioned') return at;
  const h = await r.store.horizonOf(r.key, { partition: r.partition });
  if (h === null || asOfTime >= h.horizon) return at;
  return (
    `${at}: that is before the retention horizon ${h.horizon} (${iso(h.horizon)}) of partition ${h.writer} ` +
    `(stream time ${iso(h.streamTime)} minus historyRetention), where only the key's latest version can answer, and it is newer than ${iso(asOfTime)} or a tombstone`
  );
}

/** A time option when given (see parseTime). */
function optionalTime(v: string | undefined): number | undefined {
  return v === undefined ? undefined : parseTime(v);
}

/** Parses a timestamp option as the HTTP API does (parseTimeText): epoch milliseconds or an ISO-8601 date (UTC unless an offset is given). */
function parseTime(v: string): number {
  try {
    return parseTimeText('time', v);
  } catch (e) {
    throw new CliFailure((e as Error).message, ExitCode.FAILED);
  }
}
