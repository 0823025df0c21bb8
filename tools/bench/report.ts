/** Benchmark report: the markdown table, ratios, and the JSON written to bench/results. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BenchOptions } from './args';
import type { AdjunctDetails } from './phases/adjunct';
import { PhaseResult } from './phases/types';
import { ProfileSummary } from './profile-summary';

/** Everything one bench run produced. */
export interface BenchReport {
  date: string;
  records: number;
  options: BenchOptions;
  machine: { cpus: number; cpuModel: string; memGb: number; node: string; platform: string; kernel: string; benchNodeFlags?: string[] };
  dataset: { outOfOrderShare: number; minTs: number; maxTs: number; produceSeconds: number };
  phases: PhaseResult[];
  ratios: {
    adjunctVsRawInsert: number | null;
    adjunctVsRawBatchedInsert: number | null;
    adjunctVsSeedPath: number | null;
    libraryVsRawSelect: number | null;
    /** getValue as of a time (no validTo: one read) against the bare SELECT; informational, not a target. */
    libraryValueVsRawSelect?: number | null;
  };
  /** CPU time (user + system) per record: the worker child from start to caught-up, the raw clients over their timed window. */
  cpuMicrosPerRecord: { adjunct: number | null; rawInsert: number | null; rawBatchedInsert: number | null };
  /** Whether Cassandra and Kafka were pinned to one core and the client under test to the other. */
  pinned: boolean;
  worker: (Partial<AdjunctDetails> & { peakRssMb: number | null }) | { peakRssMb: null };
  statementsPerRecord: Record<string, number | null>;
  lookupsFound?: { library: number; libraryValue?: number; raw: number };
  profile?: ProfileSummary;
  targets: Record<string, { target: string; met: boolean | null }>;
}

/** Machine facts recorded with each run. */
export function machineInfo(): BenchReport['machine'] {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: process.platform,
    kernel: os.release(),
    // V8 flags of the bench process, where the raw clients run (the worker child's are in worker.nodeFlags).
    benchNodeFlags: process.execArgv.filter((a) => /^--(no-)?[a-z-]+(=\S+)?$/.test(a) && !/^--(require|import|loader)/.test(a)),
  };
}

/** The round with the median rate (the lower middle one for an even count), with every round's rate in extra.roundRates. */
export function medianPhase(rounds: PhaseResult[]): PhaseResult {
  const sorted = [...rounds].sort((a, b) => a.ratePerSec - b.ratePerSec);
  const med = sorted[(sorted.length - 1) >> 1];
  return { ...med, extra: { ...med.extra, rounds: rounds.length, roundRates: rounds.map((r) => Math.round(r.ratePerSec)) } };
}

/** Ratio a/b of two rates, or null when either is missing. */
export function ratio(a: PhaseResult | undefined, b: PhaseResult | undefined): number | null {
  return a && b && b.ratePerSec > 0 ? a.ratePerSec / b.ratePerSec : null;
}

const f1 = (n: number | null | undefined, d = 1) => (n === null || n === undefined || Number.isNaN(n) ? '–' : n.toFixed(d));

/** Markdown rendering of a report. */
export function reportMarkdown(r: BenchReport): string {
  const lines = [
    `### adjunct bench — ${r.date}`,
    '',
    `${r.records.toLocaleString('en')} records over ${r.options.keys} keys, ${(r.dataset.outOfOrderShare * 100).toFixed(2)}% out of order per partition, ${r.options.partitions} partitions, concurrency ${r.options.concurrency}; ` +
      `${r.machine.cpus} cpus (${r.machine.cpuModel}), ${r.machine.memGb} GB, node ${r.machine.node}. Kafka, Cassandra and the bench share the machine.`,
    '',
    '| phase | count | seconds | rate/s | p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.phases.map(
      (p) =>
        `| ${p.phase} | ${p.count.toLocaleString('en')} ${p.unit} | ${f1(p.seconds, 2)} | ${Math.round(p.ratePerSec).toLocaleString('en')} | ${f1(p.latency?.p50Ms, 2)} | ${f1(p.latency?.p99Ms, 2)} |`,
    ),
    '',
    `| ratio | value | target |`,
    '|---|---:|---|',
    `| adjunct / raw insert | ${f1(r.ratios.adjunctVsRawInsert, 2)} | ${r.targets.adjunctVsRawInsert.target} ${mark(r.targets.adjunctVsRawInsert.met)} |`,
    `| adjunct / raw batched insert | ${f1(r.ratios.adjunctVsRawBatchedInsert, 2)} | ${r.targets.adjunctVsRawBatchedInsert.target} ${mark(r.targets.adjunctVsRawBatchedInsert.met)} |`,
    `| adjunct / seed path | ${f1(r.ratios.adjunctVsSeedPath, 2)} | ${r.targets.adjunctVsSeedPath.target} ${mark(r.targets.adjunctVsSeedPath.met)} |`,
    `| library / bare SELECT | ${f1(r.ratios.libraryVsRawSelect, 2)} | ${r.targets.libraryVsRawSelect.target} ${mark(r.targets.libraryVsRawSelect.met)} |`,
    `| library getValue (no validTo) / bare SELECT | ${f1(r.ratios.libraryValueVsRawSelect, 2)} | (not a target) |`,
    `| worker peak RSS (MB) | ${f1(r.worker.peakRssMb, 0)} | ${r.targets.peakRss.target} ${mark(r.targets.peakRss.met)} |`,
    `| CPU µs/record: adjunct worker | ${f1(r.cpuMicrosPerRecord.adjunct, 1)} | ${r.targets.cpu.target} ${mark(r.targets.cpu.met)} |`,
    `| CPU µs/record: adjunct worker after start-up (start-up CPU s) | ${f1((r.worker as Partial<AdjunctDetails>).cpuMicrosPerRecordAfterStartup, 1)} (${f1((r.worker as Partial<AdjunctDetails>).startupCpuSeconds, 2)}) | |`,
    `| CPU µs/record: raw insert / raw batched insert | ${f1(r.cpuMicrosPerRecord.rawInsert, 1)} / ${f1(r.cpuMicrosPerRecord.rawBatchedInsert, 1)} | |`,
    `| Cassandra CPU µs/record (median round): ${r.phases
      .filter((p) => typeof p.extra?.serverCpuMicrosPerRecord === 'number')
      .map((p) => `${p.phase} ${f1(p.extra!.serverCpuMicrosPerRecord as number, 1)}`)
      .join(' / ')} | |`,
    `| Kafka broker CPU µs/record (median round): ${r.phases
      .filter((p) => typeof p.extra?.kafkaCpuMicrosPerRecord === 'number')
      .map((p) => `${p.phase} ${f1(p.extra!.kafkaCpuMicrosPerRecord as number, 1)}`)
      .join(' / ')} | |`,
    '',
    `Rates are medians of ${r.options.rounds} rounds in rotated phase order, after ${r.options.warmupRounds ?? 0} untimed warm-up round(s)${r.pinned ? '; Cassandra and Kafka pinned to CPU 0, the client under test to CPU 1' : ', unpinned'}. The adjunct phase is timed from process spawn to its last commit (commit interval ${r.options.commitInterval} ms).`,
    '',
    `Cassandra requests per record: ${Object.entries(r.statementsPerRecord)
      .map(([k, v]) => `${k} ${f1(v, 3)}`)
      .join(', ')}.`,
  ];
  const w = r.worker as Partial<AdjunctDetails>;
  if (w.requests) {
    lines.push(
      `Worker requests (client side, counted in the child): ${JSON.stringify(w.requests)}; wall incl. start-up ${f1(w.wallSecondsInclStartup, 1)} s (start-up ${f1(w.startupSeconds, 1)} s; schema applied untimed before the spawn in ${f1(w.schemaSeconds, 1)} s); first→last data write ${f1(w.writeSeconds, 2)} s, then ${f1(w.commitLagSeconds, 2)} s until the commits reached the end; RSS at end ${f1(w.endRssMb, 0)} MB (V8 heap used ${f1(w.endHeapUsedMb, 0)} of ${f1(w.endHeapTotalMb, 0)} MB, external ${f1(w.endExternalMb, 0)} MB)${w.nodeFlags?.length ? `; node flags ${w.nodeFlags.join(' ')}` : ''}${w.childNodeOptions ? ` (experiment flags ${w.childNodeOptions})` : ''}; child mode ${w.mode}.`,
    );
  }
  if (w.server)
    lines.push(
      `Server side (system_views coordinator counters of the worker keyspace): reads ${w.server.reads}, writes ${w.server.writes}; by table ${JSON.stringify(w.server.byTable)}.`,
    );
  return lines.join('\n');
}

function mark(met: boolean | null): string {
  return met === null ? '' : met ? '✅' : '❌';
}

/** Targets (never assertions): ≥ 1.0× raw insert, ≥ 0.7× raw batched insert, ≥ 5× seed path, library ≥ 0.9× SELECT, RSS ≤ 256 MB at 1M, CPU ≤ raw insert. */
export function targets(r: Pick<BenchReport, 'ratios' | 'worker' | 'records' | 'cpuMicrosPerRecord'>): BenchReport['targets'] {
  const ge = (v: number | null, t: number) => (v === null ? null : v >= t);
  const rss = r.worker.peakRssMb;
  const cpu = r.cpuMicrosPerRecord;
  return {
    adjunctVsRawInsert: { target: '≥ 1.0', met: ge(r.ratios.adjunctVsRawInsert, 1.0) },
    adjunctVsRawBatchedInsert: { target: '≥ 0.7', met: ge(r.ratios.adjunctVsRawBatchedInsert, 0.7) },
    adjunctVsSeedPath: { target: '≥ 5', met: ge(r.ratios.adjunctVsSeedPath, 5) },
    libraryVsRawSelect: { target: '≥ 0.9', met: ge(r.ratios.libraryVsRawSelect, 0.9) },
    peakRss: { target: '≤ 256 MB at 1M records', met: rss === null ? null : r.records >= 1_000_000 ? rss <= 256 : null },
    cpu: { target: '≤ raw insert', met: cpu.adjunct === null || cpu.rawInsert === null ? null : cpu.adjunct <= cpu.rawInsert },
  };
}

/** Writes latest.json (full runs) and records-<N>.json, or partial-<phases>-<N>.json, and appends to history.jsonl. */
export function writeResults(r: BenchReport, dir: string, full: boolean): string {
  fs.mkdirSync(dir, { recursive: true });
  const json = JSON.stringify(r, null, 2) + '\n';
  let main: string;
  if (full) {
    main = path.join(dir, 'latest.json');
    fs.writeFileSync(main, json);
    fs.writeFileSync(path.join(dir, `records-${r.records}.json`), json);
  } else {
    main = path.join(dir, `partial-${r.options.phases.join('+')}${r.options.profile ? '-profile' : ''}-${r.records}.json`);
    fs.writeFileSync(main, json);
  }
  const summary = {
    date: r.date,
    records: r.records,
    phases: r.options.phases.length === 6 ? 'all' : r.options.phases.join('+'),
    rounds: r.options.rounds,
    pinned: r.pinned,
    cpuMicrosPerRecord: r.cpuMicrosPerRecord,
    profiled: r.options.profile,
    rates: Object.fromEntries(r.phases.map((p) => [p.phase, Math.round(p.ratePerSec)])),
    ratios: r.ratios,
    peakRssMb: r.worker.peakRssMb === null ? null : Math.round(r.worker.peakRssMb),
    statementsPerRecord: r.statementsPerRecord,
    cpus: r.machine.cpus,
    node: r.machine.node,
  };
  fs.appendFileSync(path.join(dir, 'history.jsonl'), JSON.stringify(summary) + '\n');
  return main;
}
