import { PipelineStatusRow } from '../catalog';
import { StoreEntry } from '../generations';
import { LookupContext, orIfMissing } from './lookup-context';
import { invalidLookupArgument } from './lookup-error';
import { ReadyTimeoutError } from './ready-timeout-error';
import { PipelineReadiness, Readiness } from './types';

/** Options of waitUntilReady. */
export interface WaitOptions {
  /** Give up after this many ms with a ReadyTimeoutError (default 30000). */
  timeoutMs?: number;
  /** Poll interval in ms (default 250). */
  pollMs?: number;
}

/** Bootstrap readiness from the persisted pipeline status rows: a pipeline is READY when its store's current generation is. */
export class ReadinessChecker {
  constructor(private readonly ctx: LookupContext) {}

  /** Readiness of the `expected` pipelines (MISSING when they have no status row), or of every pipeline with status rows. */
  async readiness(expected: string[] = []): Promise<Readiness> {
    const [rows, entries] = await Promise.all([orIfMissing(this.ctx.status.list(), []), orIfMissing(this.ctx.catalog.list(), [])]);
    const stores = new Map(entries.map((e) => [e.store, e]));
    const byPipeline = new Map<string, PipelineStatusRow[]>();
    for (const r of rows) {
      const prs = byPipeline.get(r.pipeline);
      if (prs === undefined) byPipeline.set(r.pipeline, [r]);
      else prs.push(r);
    }
    const wanted = new Set(expected);
    const pipelines: PipelineReadiness[] = [];
    for (const [pipeline, prs] of byPipeline)
      if (wanted.size === 0 || wanted.has(pipeline)) pipelines.push(this.judge(pipeline, prs, stores));
    for (const p of expected) {
      if (!byPipeline.has(p)) pipelines.push({ pipeline: p, store: '', generation: 0, state: 'MISSING', recordsDone: 0, recordsTotal: 0 });
    }
    pipelines.sort((a, b) => a.pipeline.localeCompare(b.pipeline));
    const notReady = pipelines.filter((p) => p.state !== 'READY').map((p) => p.pipeline);
    return { ready: notReady.length === 0, pipelines, notReady };
  }

  /** Resolves once the named pipeline (or every pipeline writing the named store) is READY at the current generation. */
  async waitUntilReady(target: string, options: WaitOptions = {}): Promise<PipelineReadiness[]> {
    if (typeof target !== 'string' || target.length === 0) throw invalidLookupArgument('waitUntilReady needs a pipeline or store name');
    const timeoutMs = options.timeoutMs ?? 30_000;
    const pollMs = options.pollMs ?? 250;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0)
      throw invalidLookupArgument(`timeoutMs must be a non-negative integer, got ${String(timeoutMs)}`);
    const { clock } = this.ctx;
    const deadline = clock.now() + timeoutMs;
    let lastSeen: Record<string, string> = {};
    for (;;) {
      const states = await this.current(target);
      lastSeen = Object.fromEntries(states.map((s) => [s.pipeline, `${s.state}@g${s.generation}`]));
      if (states.length > 0 && states.every((s) => s.state === 'READY')) return states;
      const left = deadline - clock.now();
      if (left <= 0) throw new ReadyTimeoutError(target, timeoutMs, lastSeen);
      await clock.sleep(Math.min(pollMs, left));
    }
  }

  /** Fresh status of the pipelines behind target (a pipeline name, else a store name). */
  private async current(target: string): Promise<PipelineReadiness[]> {
    const own = await orIfMissing(this.ctx.status.get(target), null);
    const pairs = own
      ? [{ pipeline: target, store: own.store }]
      : (await orIfMissing(this.ctx.status.list(), []))
          .filter((r) => r.store === target)
          .map((r) => ({ pipeline: r.pipeline, store: r.store }));
    const unique = [...new Map(pairs.map((p) => [p.pipeline, p])).values()];
    return Promise.all(
      unique.map(async ({ pipeline, store }) => {
        const entry = await this.ctx.entry(store, true);
        const gen = entry?.currentGeneration ?? 1;
        const row = await this.ctx.status.get(pipeline, gen);
        return {
          pipeline,
          store,
          generation: gen,
          state: row?.state ?? 'MISSING',
          recordsDone: row?.recordsDone ?? 0,
          recordsTotal: row?.recordsTotal ?? 0,
        };
      }),
    );
  }

  private judge(pipeline: string, rows: PipelineStatusRow[], stores: Map<string, StoreEntry>): PipelineReadiness {
    const newest = rows.reduce((a, b) => (b.generation > a.generation ? b : a));
    const gen = stores.get(newest.store)?.currentGeneration ?? newest.generation;
    const row = rows.find((r) => r.generation === gen);
    return {
      pipeline,
      store: newest.store,
      generation: gen,
      state: row?.state ?? 'MISSING',
      recordsDone: row?.recordsDone ?? 0,
      recordsTotal: row?.recordsTotal ?? 0,
    };
  }
}
