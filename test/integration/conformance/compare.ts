/**
 * Asks adjunct (through the lookup library) the same probes as the Kafka Streams reference, and compares the answers.
 * Everything must agree, validTo included, except two artefacts of Kafka Streams' segmented RocksDB layout that are
 * not KIP-889/KIP-968 behaviour (each version is stored in the segment of its validTo, segment id = ⌊t / interval⌋):
 *
 * (a) MultiVersionedKeyQuery only reads the segments up to toTime's segment (plus the latest-value store), so it skips
 *     a version whose validTo lies in a later segment, although that version is valid inside [fromTime, toTime];
 * (b) expired versions (validTo ≤ horizon) linger until their whole segment is dropped (segments below the horizon's
 *     segment are dropped on the next put), so a history may still return a version KIP-889 says is gone.
 *
 * Only history answers can show these; as-of gets never read an expired version nor a segment before asOf's.
 */
import { StoreLookup } from '../../../src/lookup';
import { Probe, ProbeAnswer, Version } from './kstreams-reference';
import { BASE, SEGMENT_INTERVAL_MS } from './scenario';

/** One disagreement between the two stores. */
export interface Disagreement {
  probe: Probe;
  kind: string;
  kstreams: ProbeAnswer;
  adjunct: ProbeAnswer;
}

/** What the comparison found: disagreements, and how many history entries each tolerated artefact explained. */
export interface Comparison {
  probes: number;
  disagreements: Disagreement[];
  tolerated: { skippedLaterSegment: number; lingeringExpired: number };
}

/** Answers the probes with adjunct's lookup (a bounded number in flight). */
export async function askAdjunct(store: StoreLookup<string, string>, probes: Probe[], concurrency = 16): Promise<ProbeAnswer[]> {
  const out: ProbeAnswer[] = new Array(probes.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < probes.length; i = next++) {
      const p = probes[i];
      if (p.op === 'get') {
        const r = await store.get(p.key, p.asOf);
        out[i] = r === null ? null : version(r);
      } else {
        out[i] = (await store.history(p.key, { fromTime: p.fromTime, toTime: p.toTime, order: 'asc' })).map(version);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

function version(r: { value: string; timestamp?: number; validTo?: number }): Version {
  if (r.timestamp === undefined) throw new Error(`adjunct returned a versioned record without timestamp: ${JSON.stringify(r)}`);
  return { value: r.value, timestamp: r.timestamp, validTo: r.validTo ?? null };
}

const segment = (t: number) => Math.floor(t / SEGMENT_INTERVAL_MS);
const same = (x: Version | null, y: Version | null) => JSON.stringify(x) === JSON.stringify(y);

/** Compares answers probe by probe; horizon(partition) is that partition's stream time − retention. */
export function compare(
  probes: Probe[],
  kstreams: ProbeAnswer[],
  adjunct: ProbeAnswer[],
  horizon: (partition: number) => number,
): Comparison {
  const c: Comparison = { probes: probes.length, disagreements: [], tolerated: { skippedLaterSegment: 0, lingeringExpired: 0 } };
  probes.forEach((probe, i) => {
    const [k, a] = [kstreams[i], adjunct[i]];
    if (probe.op === 'get') {
      if (!same(k as Version | null, a as Version | null))
        c.disagreements.push({ probe, kind: getKind(k as Version | null, a as Version | null), kstreams: k, adjunct: a });
      return;
    }
    const kind = historyKind(k as Version[], a as Version[], probe, horizon(probe.partition), c.tolerated);
    if (kind) c.disagreements.push({ probe, kind, kstreams: k, adjunct: a });
  });
  return c;
}

function getKind(k: Version | null, a: Version | null): string {
  if (k === null) return 'get: adjunct returns a version, Kafka Streams none';
  if (a === null) return 'get: Kafka Streams returns a version, adjunct none';
  if (k.timestamp === a.timestamp && k.value === a.value)
    return a.validTo === null ? 'get: validTo missing in adjunct' : 'get: validTo differs';
  return 'get: different version';
}

/** Null when the histories agree up to the two artefacts (counted in tolerated), else the kind of disagreement. */
function historyKind(
  k: Version[],
  a: Version[],
  range: { fromTime: number; toTime: number },
  h: number,
  tolerated: Comparison['tolerated'],
): string | null {
  const { fromTime, toTime } = range;
  const kBy = new Map(k.map((v) => [v.timestamp, v]));
  const aBy = new Map(a.map((v) => [v.timestamp, v]));
  const kinds = new Set<string>();
  let skipped = 0;
  let lingering = 0;
  for (const v of a) {
    const kv = kBy.get(v.timestamp);
    if (kv) {
      if (!same(kv, v)) kinds.add(kv.value === v.value ? 'history: validTo differs' : 'history: value differs');
    } else if (v.validTo !== null && v.timestamp <= toTime && v.validTo > Math.max(fromTime, h) && segment(v.validTo) > segment(toTime))
      skipped++; // artefact (a)
    else kinds.add('history: version missing in Kafka Streams');
  }
  for (const v of k) {
    if (aBy.has(v.timestamp)) continue;
    if (v.validTo !== null && v.validTo <= h && segment(v.validTo) >= segment(h))
      lingering++; // artefact (b)
    else kinds.add('history: version missing in adjunct');
  }
  if (!kinds.size && !sameOrder(k, a)) kinds.add('history: order differs');
  if (kinds.size) return [...kinds].join('; ');
  tolerated.skippedLaterSegment += skipped;
  tolerated.lingeringExpired += lingering;
  return null;
}

function sameOrder(k: Version[], a: Version[]): boolean {
  const common = new Set(k.map((v) => v.timestamp).filter((t) => a.some((v) => v.timestamp === t)));
  const ks = k.filter((v) => common.has(v.timestamp)).map((v) => v.timestamp);
  const as = a.filter((v) => common.has(v.timestamp)).map((v) => v.timestamp);
  return JSON.stringify(ks) === JSON.stringify(as);
}

/** A readable report: counts per kind, then up to `examples` lines per kind (key, time, Kafka Streams answer, adjunct answer). */
export function describeDisagreements(title: string, c: Comparison, examples = 12): string {
  const byKind = new Map<string, Disagreement[]>();
  for (const d of c.disagreements) byKind.set(d.kind, [...(byKind.get(d.kind) ?? []), d]);
  const lines = [
    `${title}: ${c.disagreements.length} of ${c.probes} probes disagree (tolerated Kafka Streams artefacts: ${c.tolerated.skippedLaterSegment} versions skipped, ${c.tolerated.lingeringExpired} lingering)`,
  ];
  for (const [kind, ds] of [...byKind].sort((x, y) => x[1].length - y[1].length)) {
    lines.push(`  ${ds.length} × ${kind}${ds.length > examples ? `, e.g.` : ''}`);
    for (const d of ds.slice(0, examples)) {
      const p = d.probe;
      const at =
        p.op === 'get' ? (p.asOf === undefined ? 'latest' : `asOf ${time(p.asOf)}`) : `history [${time(p.fromTime)}, ${time(p.toTime)}]`;
      lines.push(`    p${p.partition} ${JSON.stringify(p.key)} ${at}: kstreams ${answer(d.kstreams)} | adjunct ${answer(d.adjunct)}`);
    }
  }
  return lines.join('\n');
}

/** A scenario time as B±offset (B = BASE), which is how the scenario is written. */
function time(t: number): string {
  return t < BASE / 2 ? String(t) : `B${t >= BASE ? '+' : ''}${t - BASE}`;
}

function answer(a: ProbeAnswer): string {
  const one = (v: Version) => `${JSON.stringify(v.value)}@${time(v.timestamp)}..${v.validTo === null ? '' : time(v.validTo)}`;
  if (a === null) return 'null';
  return Array.isArray(a) ? `[${a.map(one).join(', ')}]` : one(a);
}
