/** Cassandra's CPU time during a phase, from /proc/<pid>/stat (utime + stime of the stack's Cassandra process). */
import * as fs from 'fs';
import * as path from 'path';

/** Clock ticks per second of /proc/<pid>/stat on Linux (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** CPU seconds used so far by the stack's Cassandra, or undefined when its pid or /proc is not readable. */
export function cassandraCpuSeconds(stackDir: string): number | undefined {
  return serviceCpuSeconds(stackDir, 'cassandra');
}

/** CPU seconds used so far by one of the stack's services (its pid file), or undefined when not readable. */
export function serviceCpuSeconds(stackDir: string, service: 'cassandra' | 'kafka'): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(stackDir, `${service}.pid`), 'utf8').trim());
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Busy and total jiffies of each CPU from /proc/stat (cpu0, cpu1, …), or undefined off Linux. */
export function cpuJiffies(): { busy: number; total: number }[] | undefined {
  try {
    const lines = fs.readFileSync('/proc/stat', 'utf8').split('\n');
    const out: { busy: number; total: number }[] = [];
    for (const l of lines) {
      const m = /^cpu(\d+)\s+(.*)$/.exec(l);
      if (!m) continue;
      const v = m[2].trim().split(/\s+/).map(Number);
      const idle = v[3] + (v[4] ?? 0);
      const total = v.reduce((a, b) => a + b, 0);
      out[Number(m[1])] = { busy: total - idle, total };
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Busy share of each CPU between two cpuJiffies samples (0–1). */
export function cpuBusyShares(a: { busy: number; total: number }[], b: { busy: number; total: number }[]): number[] {
  return b.map((x, i) => (x.total - a[i].total > 0 ? (x.busy - a[i].busy) / (x.total - a[i].total) : 0));
}

/**
 * Waits until the stack's Cassandra is idle (under `idleShare` of one CPU over a second: flushes and compactions of the
 * previous phase done), so every phase starts from the same state; gives up after maxMs. Returns the seconds waited.
 */
export async function settleCassandra(stackDir: string, idleShare = 0.1, maxMs = 120_000): Promise<number> {
  const t0 = Date.now();
  let prev = cassandraCpuSeconds(stackDir);
  if (prev === undefined) return 0;
  while (Date.now() - t0 < maxMs) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cassandraCpuSeconds(stackDir);
    if (now === undefined) return (Date.now() - t0) / 1000;
    if (now - prev < idleShare) return (Date.now() - t0) / 1000;
    prev = now;
  }
  return (Date.now() - t0) / 1000;
}

/** The stack's Cassandra and Kafka CPU seconds and every CPU's jiffies at one moment (fields unset when unreadable). */
export interface CpuSample {
  cassandra?: number;
  kafka?: number;
  jiffies?: { busy: number; total: number }[];
}

/** Samples the stack's server CPU counters and the CPUs' jiffies now. */
export function sampleCpu(stackDir: string): CpuSample {
  return { cassandra: cassandraCpuSeconds(stackDir), kafka: serviceCpuSeconds(stackDir, 'kafka'), jiffies: cpuJiffies() };
}

/**
 * Cassandra's and the Kafka broker's CPU µs per record and each CPU's busy share between two samples, as a phase's
 * extra fields (the broker shares CPU 0 with Cassandra when pinned: its share is what serving the fetches costs).
 */
export function cpuBetween(a: CpuSample, b: CpuSample, records: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (a.cassandra !== undefined && b.cassandra !== undefined) out.serverCpuMicrosPerRecord = ((b.cassandra - a.cassandra) * 1e6) / records;
  if (a.kafka !== undefined && b.kafka !== undefined) out.kafkaCpuMicrosPerRecord = ((b.kafka - a.kafka) * 1e6) / records;
  if (a.jiffies && b.jiffies) out.cpuBusy = cpuBusyShares(a.jiffies, b.jiffies).map((x) => Math.round(x * 100) / 100);
  return out;
}

/** Starts a timed window's server CPU sample; the returned function gives cpuBetween's fields for the window so far. */
export function serverCpuWindow(stackDir: string): (records: number) => Record<string, unknown> {
  const start = sampleCpu(stackDir);
  return (records) => cpuBetween(start, sampleCpu(stackDir), records);
}

/**
 * Server CPU summed over several timed windows of one phase (the slices of an interleaved phase): `open` a window,
 * `close` it, and `fields(records)` gives cpuBetween's fields for all closed windows together.
 */
export class ServerCpuTally {
  private start?: CpuSample;
  private cassandra?: number = 0;
  private kafka?: number = 0;
  private jiffies?: { busy: number; total: number }[] = [];

  constructor(private readonly stackDir: string) {}

  /** Starts a window. */
  open(): void {
    this.start = sampleCpu(this.stackDir);
  }

  /** Ends the window opened last and adds it to the tally. */
  close(): void {
    const a = this.start!;
    const b = sampleCpu(this.stackDir);
    this.cassandra =
      a.cassandra === undefined || b.cassandra === undefined || this.cassandra === undefined
        ? undefined
        : this.cassandra + b.cassandra - a.cassandra;
    this.kafka = a.kafka === undefined || b.kafka === undefined || this.kafka === undefined ? undefined : this.kafka + b.kafka - a.kafka;
    if (a.jiffies === undefined || b.jiffies === undefined || this.jiffies === undefined) this.jiffies = undefined;
    else {
      const sum = this.jiffies;
      this.jiffies = b.jiffies.map((x, i) => ({
        busy: (sum[i]?.busy ?? 0) + x.busy - a.jiffies![i].busy,
        total: (sum[i]?.total ?? 0) + x.total - a.jiffies![i].total,
      }));
    }
  }

  /** cpuBetween's fields over every closed window. */
  fields(records: number): Record<string, unknown> {
    const zero: CpuSample = { cassandra: 0, kafka: 0, jiffies: this.jiffies?.map(() => ({ busy: 0, total: 0 })) };
    return cpuBetween(zero, { cassandra: this.cassandra, kafka: this.kafka, jiffies: this.jiffies }, records);
  }
}
