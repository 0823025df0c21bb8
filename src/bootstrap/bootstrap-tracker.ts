import { Admin } from 'kafkajs';
import { SingleBar } from 'cli-progress';
import { PipelineStatusTable } from '../catalog';
import { Clock, systemClock } from '../clock';
import { describeError } from '../errors';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { topicPartitionKey } from '../kafka/topic-partition';
import { fetchPartitionOffsets } from './topic-offsets';

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
/** Number of offsets from `from` up to `to`, 0 when `to` is not past `from`. */
const span = (from: bigint, to: bigint) => (to > from ? to - from : 0n);

/** A snapshot of bootstrap progress. */
export interface BootstrapProgress {
  state: 'BOOTSTRAPPING' | 'READY';
  done: number;
  total: number;
  ratePerSec: number;
  etaSeconds: number | null;
}

/** Settings of a bootstrap tracker. */
export interface BootstrapTrackerOptions {
  admin: Admin;
  groupId: string;
  topics: string[];
  pipeline: string;
  store: string;
  generation: number;
  status: PipelineStatusTable;
  logger: Logger;
  metrics: AdjunctMetrics;
  workerId: string;
  pollMs?: number;
  progressBar?: boolean;
  /** Time source of the rate and ETA (default: the system clock). */
  clock?: Clock;
}

/**
 * Samza-style bootstrap: captures the end offsets when it starts (or reuses those persisted by an earlier attempt
 * of the same generation) and reports READY once the group's committed offsets reached them on every partition.
 * Progress is persisted in Cassandra so other processes can watch it or wait for READY.
 */
export class BootstrapTracker {
  private end = new Map<string, bigint>();
  private start = new Map<string, bigint>();
  private timer?: NodeJS.Timeout;
  private readyResolve!: () => void;
  /** Resolves when this generation is READY. */
  readonly ready: Promise<void>;
  private progress: BootstrapProgress = { state: 'BOOTSTRAPPING', done: 0, total: 0, ratePerSec: 0, etaSeconds: null };
  private readonly clock: Clock;
  private lastSample: { t: number; done: number };
  private lastLog = 0;
  private bar?: SingleBar;
  private stopped = false;

  constructor(private readonly o: BootstrapTrackerOptions) {
    this.ready = new Promise((r) => (this.readyResolve = r));
    this.clock = o.clock ?? systemClock;
    this.lastSample = { t: this.clock.now(), done: 0 };
  }

  /** Current progress. */
  snapshot(): BootstrapProgress {
    return { ...this.progress };
  }

  /** Captures (or restores) end offsets, persists BOOTSTRAPPING, and starts polling. */
  async begin(): Promise<void> {
    const existing = await this.o.status.get(this.o.pipeline, this.o.generation);
    if (existing?.state === 'READY') {
      this.markReady(false);
      return;
    }
    const parts = await fetchPartitionOffsets(this.o.admin, this.o.groupId, this.o.topics);
    const persistedEnd = existing?.state === 'BOOTSTRAPPING' ? existing.endOffsets : undefined;
    for (const p of parts) {
      const id = topicPartitionKey(p.topic, p.partition);
      this.end.set(id, persistedEnd?.[id] !== undefined ? BigInt(persistedEnd[id]) : p.high);
      this.start.set(id, p.committed !== null && p.committed > p.low ? p.committed : p.low);
    }
    this.o.logger.info(
      {
        pipeline: this.o.pipeline,
        generation: this.o.generation,
        endOffsets: Object.fromEntries([...this.end].map(([k, v]) => [k, v.toString()])),
        resumed: !!persistedEnd,
      },
      'bootstrap: captured end offsets',
    );
    if (this.o.progressBar && process.stdout.isTTY) {
      this.bar = new SingleBar({
        format: `${this.o.pipeline} bootstrap [{bar}] {percentage}% | {value}/{total} records | {rate}/s | ETA {eta}s`,
      });
      this.bar.start(1, 0, { rate: 0 });
    }
    await this.poll();
    if (!this.stopped && this.progress.state !== 'READY') {
      this.timer = setInterval(
        () => void this.poll().catch((e) => this.o.logger.warn({ err: describeError(e) }, 'bootstrap poll failed')),
        this.o.pollMs ?? 1000,
      );
    }
  }

  /** Re-reads the group's committed offsets and updates progress, status and READY. */
  async poll(): Promise<void> {
    if (this.progress.state === 'READY' || this.stopped) return;
    const parts = await fetchPartitionOffsets(this.o.admin, this.o.groupId, this.o.topics);
    let done = 0n;
    let total = 0n;
    let reached = true;
    const progress: Record<string, string> = {};
    for (const p of parts) {
      const id = topicPartitionKey(p.topic, p.partition);
      const end = this.end.get(id) ?? p.high;
      const start = this.start.get(id) ?? p.low;
      const pos = p.committed ?? start;
      total += span(start, end);
      done += span(start, min(pos, end));
      progress[id] = pos.toString();
      if (pos < max(end, p.low)) reached = false; // records deleted by retention count as reached
    }
    const now = this.clock.now();
    const dn = Number(done);
    const rate = now > this.lastSample.t ? ((dn - this.lastSample.done) * 1000) / (now - this.lastSample.t) : 0;
    this.lastSample = { t: now, done: dn };
    const tn = Number(total);
    this.progress = {
      state: reached ? 'READY' : 'BOOTSTRAPPING',
      done: dn,
      total: tn,
      ratePerSec: Math.round(rate),
      etaSeconds: rate > 0 ? Math.ceil((tn - dn) / rate) : null,
    };
    this.o.metrics.bootstrapProgress.set({ pipeline: this.o.pipeline }, tn === 0 ? 1 : dn / tn);
    this.bar?.setTotal(Math.max(tn, 1));
    this.bar?.update(dn, { rate: Math.round(rate) });
    await this.o.status.put({
      pipeline: this.o.pipeline,
      generation: this.o.generation,
      store: this.o.store,
      state: reached ? 'READY' : 'BOOTSTRAPPING',
      recordsDone: dn,
      recordsTotal: tn,
      endOffsets: Object.fromEntries([...this.end].map(([k, v]) => [k, v.toString()])),
      progress,
      lastError: null,
      worker: this.o.workerId,
    });
    if (reached) this.markReady(true);
    else if (now - this.lastLog > 5000) {
      this.lastLog = now;
      this.o.logger.info(
        {
          pipeline: this.o.pipeline,
          generation: this.o.generation,
          done: dn,
          total: tn,
          ratePerSec: Math.round(rate),
          etaSeconds: this.progress.etaSeconds,
        },
        'bootstrap progress',
      );
    }
  }

  private markReady(log: boolean): void {
    this.progress = { ...this.progress, state: 'READY', etaSeconds: 0 };
    if (this.timer) clearInterval(this.timer);
    this.bar?.update(this.progress.total);
    this.bar?.stop();
    this.bar = undefined;
    if (log)
      this.o.logger.info({ pipeline: this.o.pipeline, generation: this.o.generation, records: this.progress.done }, 'bootstrap READY');
    this.o.metrics.bootstrapProgress.set({ pipeline: this.o.pipeline }, 1);
    this.readyResolve();
  }

  /** Stops polling. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.bar?.stop();
  }
}
