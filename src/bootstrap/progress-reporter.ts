import { SingleBar } from 'cli-progress';
import { Clock } from '../clock';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { BootstrapProgress } from './bootstrap-progress';

/** Where one pipeline's bootstrap progress goes: rate and ETA, the progress gauge, a TTY progress bar and a log line every 5 s. */
export class ProgressReporter {
  private lastSample: { t: number; done: number };
  private lastLog = 0;
  private bar?: SingleBar;

  constructor(
    private readonly o: {
      pipeline: string;
      generation: number;
      logger: Logger;
      metrics: AdjunctMetrics;
      clock: Clock;
      progressBar: boolean;
    },
  ) {
    this.lastSample = { t: o.clock.now(), done: 0 };
    if (o.progressBar && process.stdout.isTTY) {
      this.bar = new SingleBar({
        format: `${o.pipeline} bootstrap [{bar}] {percentage}% | {value}/{total} records | {rate}/s | ETA {eta}s`,
      });
      this.bar.start(1, 0, { rate: 0 });
    }
  }

  /** Turns a measurement into a progress snapshot (rate since the previous one) and reports it. */
  sample(done: number, total: number, ready: boolean): BootstrapProgress {
    const now = this.o.clock.now();
    const rate = now > this.lastSample.t ? ((done - this.lastSample.done) * 1000) / (now - this.lastSample.t) : 0;
    this.lastSample = { t: now, done };
    const progress: BootstrapProgress = {
      state: ready ? 'READY' : 'BOOTSTRAPPING',
      done,
      total,
      ratePerSec: Math.round(rate),
      etaSeconds: rate > 0 ? Math.ceil((total - done) / rate) : null,
    };
    this.o.metrics.bootstrapProgress.set({ pipeline: this.o.pipeline }, total === 0 ? 1 : done / total);
    this.bar?.setTotal(Math.max(total, 1));
    this.bar?.update(done, { rate: Math.round(rate) });
    if (!ready && now - this.lastLog > 5000) {
      this.lastLog = now;
      this.o.logger.info(
        {
          pipeline: this.o.pipeline,
          generation: this.o.generation,
          done,
          total,
          ratePerSec: progress.ratePerSec,
          etaSeconds: progress.etaSeconds,
        },
        'bootstrap progress',
      );
    }
    return progress;
  }

  /** The bootstrap finished: full bar, gauge at 1. */
  finished(total: number): void {
    this.bar?.update(total);
    this.stop();
    this.o.metrics.bootstrapProgress.set({ pipeline: this.o.pipeline }, 1);
  }

  /** Removes the progress bar. */
  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}
