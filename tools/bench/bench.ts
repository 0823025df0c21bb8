/**
 * `npm run bench`: generates a changelog topic, then on the same data measures raw Cassandra inserts, raw Kafka
 * consumption, the adjunct worker (child process: throughput, peak RSS, requests per record), the seed's naive
 * versioned write path, and as-of lookups (library vs bare SELECT). Writes bench/results/*.json. See --help.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Client } from 'cassandra-driver';
import { repoRoot, stackSettings } from '../devstack/endpoints';
import { parseBenchArgs, ALL_PHASES, BenchOptions, Phase, ROUND_PHASES } from './args';
import { generateDataset, outOfOrderShare } from './dataset';
import { benchCassandra, benchKafka, createKeyspace, createTopic, dropKeyspace, produceDataset, runId } from './infra';
import { adjunctPhase, AdjunctDetails } from './phases/adjunct';
import { lookupPhases } from './phases/lookups';
import { rawBatchedInsert, rawConsume, rawInsert } from './phases/raw';
import { CLIENT_CPUS, pinStack } from './pin';
import { seedPath } from './phases/seed-path';
import { serverCpuWindow, settleCassandra } from './server-cpu';
import { PhaseResult } from './phases/types';
import { profileMarkdown, ProfileSummary, summariseProfileFile } from './profile-summary';
import { BenchReport, machineInfo, medianPhase, ratio, reportMarkdown, targets, writeResults } from './report';

const t0 = Date.now();
/** Progress line on stderr with elapsed seconds. */
function log(msg: string): void {
  process.stderr.write(`[bench +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
}

function line(p: PhaseResult): string {
  const lat = p.latency ? `, p50 ${p.latency.p50Ms.toFixed(2)} ms, p99 ${p.latency.p99Ms.toFixed(2)} ms` : '';
  const server = p.extra?.serverCpuMicrosPerRecord;
  const busy = Array.isArray(p.extra?.cpuBusy) ? `, CPUs busy ${(p.extra.cpuBusy as number[]).join('/')}` : '';
  const probes = p.extra?.concurrencyProbeRates;
  const tuned = probes ? `, concurrency ${String(p.extra?.concurrency)} (probes ${JSON.stringify(probes)})` : '';
  const client = p.extra?.cpuMicrosPerRecord;
  const own = typeof client === 'number' ? `, client CPU ${client.toFixed(1)} µs/record` : '';
  const cpu = (typeof server === 'number' ? `, Cassandra CPU ${server.toFixed(1)} µs/record` : '') + own + busy + tuned;
  return `${p.phase}: ${p.count} ${p.unit} in ${p.seconds.toFixed(2)} s = ${Math.round(p.ratePerSec)}/s${lat}${cpu}`;
}

async function run(o: BenchOptions): Promise<void> {
  const id = runId();
  const topic = `bench-${id}`;
  const ks = `bench_${id}`;
  const adjKs = `bench_${id}_adj`;
  const groupBase = `bench-${id}`;
  const storeName = 'bench_store';
  const workDir = path.join(repoRoot(), 'bench', '.build', `run-${id}`);
  const has = (p: (typeof ALL_PHASES)[number]) => o.phases.includes(p);
  log(
    `run ${id}: ${o.records} records, ${o.keys} keys, ${o.outOfOrder} out of order, ${o.partitions} partitions, concurrency ${o.concurrency}, phases ${o.phases.join(',')}`,
  );

  const d = generateDataset({ records: o.records, keys: o.keys, outOfOrder: o.outOfOrder, partitions: o.partitions, seed: o.seed });
  const share = outOfOrderShare(d, o.partitions);
  log(`generated data set (${(share * 100).toFixed(2)}% behind their partition's stream time)`);
  const kafka = benchKafka(`bench-${id}`);
  const admin = kafka.admin();
  await admin.connect();
  let client: Client | undefined;
  const phases: PhaseResult[] = [];
  let details: AdjunctDetails | undefined;
  let lookupsFound: { library: number; libraryValue: number; raw: number } | undefined;
  let profile: ProfileSummary | undefined;
  let produceSeconds = 0;
  try {
    await createTopic(admin, topic, o.partitions);
    const p0 = Date.now();
    await produceDataset(kafka, topic, d, (n) => n % 200_000 === 0 && log(`produced ${n}`));
    produceSeconds = (Date.now() - p0) / 1000;
    log(`produced ${d.size} records to ${topic} in ${produceSeconds.toFixed(1)} s (untimed)`);
    client = await benchCassandra();
    await createKeyspace(client, ks);
    const c = client;
    const pin = o.pin ? pinStack(stackSettings().stackDir) : undefined;
    if (pin) log(`pinned: ${JSON.stringify(pin.pinned)} (servers on CPU 0, client on CPU ${CLIENT_CPUS})`);
    try {
      // Timed write phases run in every round, in rotated order, so none always meets the coldest Cassandra.
      // Warm-up rounds come first and are not counted; rounds are numbered from 0 across both (keyspace and group names).
      const warm = o.warmupRounds;
      const allRounds = warm + o.rounds;
      /** One adjunct run into its own keyspace and group (`round` = allRounds is the untimed fill the lookups read). */
      const runAdjunct = (round: number, profileThis: boolean, layout = o.layout) =>
        adjunctPhase(admin, kafka, c, {
          topic,
          keyspace: `${adjKs}${round}`,
          groupId: `${groupBase}-r${round}`,
          storeName,
          maxInFlight: o.concurrency,
          commitIntervalMs: o.commitInterval,
          records: d.size,
          workDir,
          profile: profileThis,
          cpus: pin ? CLIENT_CPUS : undefined,
          batchMaxBytes: o.batchMaxBytes,
          batchMaxRows: o.batchMaxRows,
          compaction: o.compaction,
          layout,
        });
      const timed = ROUND_PHASES.filter(has);
      const byRound = new Map<Phase, PhaseResult[]>();
      const adjRounds: AdjunctDetails[] = [];
      for (let round = 0; round < allRounds; round++) {
        const counted = round >= warm;
        const label = counted ? `round ${round - warm + 1}/${o.rounds}` : `warm-up round ${round + 1}/${warm} (not counted)`;
        const order = timed.map((_, i) => timed[(i + round) % timed.length]);
        for (const phase of order) {
          const rks = `${ks}_r${round}`;
          let r: PhaseResult;
          const serverCpu = serverCpuWindow(stackSettings().stackDir);
          if (phase === 'raw-insert') {
            await createKeyspace(c, rks);
            r = await rawInsert(c, rks, d, o.concurrency);
          } else if (phase === 'raw-batched-insert') {
            await createKeyspace(c, rks);
            r = await rawBatchedInsert(c, rks, d, o.concurrency, o.batchMaxBytes, o.batchMaxRows);
          } else if (phase === 'seed-path') {
            await createKeyspace(c, rks);
            r = await seedPath(c, rks, d, o.concurrency);
          } else {
            const a = await runAdjunct(round, o.profile && round === allRounds - 1);
            if (counted) adjRounds.push(a.details);
            r = { phase: a.phase, count: a.count, unit: a.unit, seconds: a.seconds, ratePerSec: a.ratePerSec, extra: a.extra };
            log(
              `${label}: peak RSS ${a.details.peakRssMb.toFixed(0)} MB; ${a.details.requestsPerRecord.toFixed(3)} requests/record; written ${a.details.written}, expired ${a.details.expired}`,
            );
            if (a.details.profileFile) {
              profile = summariseProfileFile(a.details.profileFile, path.join(repoRoot(), 'bench', '.build', 'worker-child.js'), 40);
              log(`profile: ${a.details.profileFile}\n${profileMarkdown(profile, 25)}`);
            }
          }
          // A phase that measured its own timed window (the adjunct phase: spawn → caught up) keeps its figures.
          r.extra = { ...serverCpu(r.count), ...r.extra };
          if (counted) byRound.set(phase, [...(byRound.get(phase) ?? []), r]);
          log(`${label}: ${line(r)}`);
          // Every phase starts on an idle Cassandra: the previous phase's tables are dropped (a kept table's memtables
          // would be flushed and compacted during a later phase) and its flushes and compactions have finished.
          if (!o.keep) await dropKeyspace(c, phase === 'adjunct' ? `${adjKs}${round}` : rks);
          const settled = await settleCassandra(stackSettings().stackDir);
          if (settled > 1) log(`Cassandra idle again after ${settled.toFixed(0)} s`);
        }
      }
      for (const phase of timed) phases.push(medianPhase(byRound.get(phase)!));
      if (adjRounds.length) {
        const med = phases.find((p) => p.phase === 'adjunct (worker)')!;
        const idx = byRound.get('adjunct')!.findIndex((r) => r.ratePerSec === med.ratePerSec);
        // The median round's details, with the peak RSS of the worst round.
        details = { ...adjRounds[Math.max(0, idx)], peakRssMb: Math.max(...adjRounds.map((a) => a.peakRssMb)) };
      }
      if (has('raw-consume')) {
        phases.push(await rawConsume(kafka, topic, `${groupBase}-raw`, d.size));
        log(line(phases[phases.length - 1]));
      }
      if (has('lookups') && o.lookups > 0) {
        // The lookups read a table filled by one more (untimed) adjunct run, after every timed phase.
        // With --keep the last timed adjunct table is still there to read; otherwise one more run fills its own.
        const fillRound = o.keep && has('adjunct') ? allRounds - 1 : allRounds;
        if (fillRound === allRounds) await runAdjunct(fillRound, false);
        const lookupKs = `${adjKs}${fillRound}`;
        // The bare SELECTs read a table of the rows layout (a hand-written client's own best), filled by one more run.
        const rawKs = o.layout === 'rows' ? lookupKs : `${adjKs}${allRounds + 1}`;
        if (o.layout !== 'rows') await runAdjunct(allRounds + 1, false, 'rows');
        const target = { keyspace: lookupKs, rawKeyspace: rawKs, storeName, stackDir: stackSettings().stackDir };
        const r = await lookupPhases(c, target, d, o.lookups, o.lookupConcurrency, o.seed, o.rounds, o.warmupRounds);
        phases.push(r.raw, r.rawPair, r.library, r.libraryValue);
        lookupsFound = r.found;
        // Same queries on a table no longer written: getValue must find a value exactly where get finds a record.
        if (r.found.libraryValue !== r.found.library)
          throw new Error(`getValue found ${r.found.libraryValue} values where get found ${r.found.library}`);
        log(`${[r.raw, r.rawPair, r.library, r.libraryValue].map(line).join('\n')} (found: ${JSON.stringify(r.found)})`);
        log(`SSTables read by the lookups, after flushing both tables: ${JSON.stringify(r.raw.extra?.sstables)}`);
      }
    } finally {
      pin?.restore();
    }
  } finally {
    if (!o.keep) {
      log('cleaning up (topic, keyspaces, groups); --keep keeps them');
      if (client) {
        await dropKeyspace(client, ks);
        for (let r = 0; r <= o.warmupRounds + o.rounds + 1; r++) {
          await dropKeyspace(client, `${ks}_r${r}`);
          await dropKeyspace(client, `${adjKs}${r}`);
        }
      }
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin
        .deleteGroups([
          `${groupBase}-raw`,
          ...Array.from({ length: o.warmupRounds + o.rounds + 2 }, (_, r) => `${groupBase}-r${r}.bench.g1`),
        ])
        .catch(() => undefined);
    }
    await admin.disconnect();
    await client?.shutdown();
  }

  const byName = (n: string) => phases.find((p) => p.phase === n);
  const adj = byName('adjunct (worker)');
  const seed = byName('seed write path');
  const report: BenchReport = {
    date: new Date().toISOString(),
    records: o.records,
    options: o,
    machine: machineInfo(),
    dataset: { outOfOrderShare: share, minTs: d.minTs, maxTs: d.maxTs, produceSeconds },
    phases,
    ratios: {
      adjunctVsRawInsert: ratio(adj, byName('raw insert')),
      adjunctVsRawBatchedInsert: ratio(adj, byName('raw batched insert')),
      adjunctVsSeedPath: ratio(adj, seed),
      libraryVsRawSelect: ratio(byName('lookups: library'), byName('lookups: bare SELECT')),
      libraryValueVsRawSelect: ratio(byName('lookups: library getValue'), byName('lookups: bare SELECT')),
    },
    cpuMicrosPerRecord: {
      adjunct: details?.cpuMicrosPerRecord ?? null,
      rawInsert: (byName('raw insert')?.extra?.cpuMicrosPerRecord as number | undefined) ?? null,
      rawBatchedInsert: (byName('raw batched insert')?.extra?.cpuMicrosPerRecord as number | undefined) ?? null,
    },
    pinned: o.pin,
    worker: details ? { ...details, peakRssMb: details.peakRssMb } : { peakRssMb: null },
    statementsPerRecord: {
      rawInsert: byName('raw insert') ? 1 : null,
      rawBatchedInsert: (byName('raw batched insert')?.extra?.statementsPerRecord as number | undefined) ?? null,
      adjunctClient: details?.requestsPerRecord ?? null,
      adjunctDataTable: details?.dataTableRequestsPerRecord ?? null,
      adjunctServer: details?.server ? (details.server.reads + details.server.writes) / o.records : null,
      seedPath: (seed?.extra?.statementsPerRecord as number | undefined) ?? null,
    },
    lookupsFound,
    profile,
    targets: {},
  };
  report.targets = targets(report);
  const md = reportMarkdown(report);
  process.stdout.write(`\n${md}\n`);
  if (o.record) {
    const dir = path.join(repoRoot(), 'bench', 'results');
    const full = ALL_PHASES.every(has);
    const file = writeResults(report, dir, full);
    const mdText = md + (profile ? `\n\n#### Worker CPU profile\n\n${profileMarkdown(profile, 25)}\n` : '') + '\n';
    fs.writeFileSync(file.replace(/\.json$/, '.md'), mdText);
    if (full) fs.writeFileSync(path.join(dir, `records-${o.records}.md`), mdText);
    log(`results: ${path.relative(repoRoot(), file)}`);
  }
}

let opts: BenchOptions;
try {
  opts = parseBenchArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(2);
}
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
// The raw clients run in this process, on the client core when pinned: they get the GC flags `adjunct run` gets on one
// CPU (bin/node-flags.js), so both sides of every ratio run with the same V8 settings. Applied by re-executing once.
const gcFlags = opts.pin && process.env.BENCH_REEXECED !== '1' ? singleCpuFlagsMissing() : [];
if (gcFlags.length > 0) {
  const r = spawnSync(process.execPath, [...process.execArgv, ...gcFlags, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_REEXECED: '1' },
  });
  process.exit(r.status ?? 1);
} else
  run(opts).then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    },
  );

/** The single-CPU flags of bin/node-flags.js this process lacks (the heap bounds are the worker's, not the bench's). */
function singleCpuFlagsMissing(): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const f = require(path.join(repoRoot(), 'bin', 'node-flags.js')) as {
    SINGLE_CPU_FLAGS: string[];
    missingNodeFlags(execArgv: string[], nodeOptions?: string, cpus?: number): string[];
  };
  return f.missingNodeFlags(process.execArgv, process.env.NODE_OPTIONS, 1).filter((x) => f.SINGLE_CPU_FLAGS.includes(x));
}
