import { PartitionOffsets } from '../bootstrap/topic-offsets';
import { Clock } from '../clock';
import { describeError } from '../errors';
import { topicPartitionKey } from '../kafka/topic-partition';
import { Logger } from '../observability/logger';

/** An assigned partition with records to read that saw no fetched batch for the watchdog's timeout. */
export interface StuckPartition {
  topic: string;
  partition: number;
  /** The task's position: after the last fetched record, else the group's committed offset, else the log start. */
  position: bigint;
  highWatermark: bigint;
  /** Milliseconds since the partition's last fetched batch (or its assignment, or the task's last busy moment). */
  idleMs: number;
}

/** Collaborators of the watchdog. */
export interface ProgressWatchdogParts {
  clock: Clock;
  /** How long an assigned partition with records to read may go without a fetched batch. */
  timeoutMs: number;
  /** Log start/end and the group's committed offsets of the task's topics (one attempt; a failure skips the check). */
  offsets: () => Promise<PartitionOffsets[]>;
  /** True while the task is RUNNING: paused, stalled, stopping or failed tasks fetch nothing on purpose. */
  running: () => boolean;
  /** A count that grows while the task gets on with its records (e.g. records settled): a busy batch that moves it is not stuck. */
  progress: () => number;
  /** The consumer is stuck on these partitions: restart it from the committed offsets (called once). */
  onStuck: (stuck: StuckPartition[]) => void;
  log: Logger;
}

/** What the watchdog knows of one assigned partition. */
interface Watched {
  topic: string;
  partition: number;
  /** When it was assigned, or when it last had a fetched batch. */
  lastFetchAt: number;
  /** Offset after the last fetched record, null before the first batch since assignment. */
  fetchedThrough: bigint | null;
}

/**
 * Notices a consumer that stopped fetching (kafkajs, after a broker failure, can keep a member in the group that never
 * fetches again): an assigned partition whose log end is beyond the task's position, with no fetched batch for
 * `timeoutMs` while the task is RUNNING (a stalled or paused task fetches nothing on purpose) and no batch in progress
 * gets on with its records (a slow batch holds kafkajs's next fetch; one hung for the timeout is stuck too). It then reports the partitions once; the task's owner restarts
 * the consumer from the committed offsets. Positions only ever lead to a restart: nothing is skipped or committed.
 */
export class ProgressWatchdog {
  private readonly watched = new Map<string, Watched>();
  /** Batches being processed now. */
  private busy = 0;
  /** Last moment the task made progress in a batch, started or ended one, or was not RUNNING: idle time counts from then. */
  private lastBusyAt: number;
  private lastProgress = Number.NaN;
  private fired = false;
  private timer?: NodeJS.Timeout;

  constructor(private readonly p: ProgressWatchdogParts) {
    this.lastBusyAt = p.clock.now();
  }

  /** A new assignment (group join): its partitions are watched from now on. */
  assigned(assignment: Record<string, number[]>): void {
    const now = this.p.clock.now();
    this.watched.clear();
    for (const [topic, partitions] of Object.entries(assignment))
      for (const partition of partitions)
        this.watched.set(topicPartitionKey(topic, partition), { topic, partition, lastFetchAt: now, fetchedThrough: null });
  }

  /** kafkajs fetched a batch of the partition up to `lastOffset` (also a batch of control records only). */
  fetched(topic: string, partition: number, lastOffset: string): void {
    const w = this.watched.get(topicPartitionKey(topic, partition));
    if (!w) return;
    w.lastFetchAt = this.p.clock.now();
    const through = BigInt(lastOffset) + 1n;
    if (w.fetchedThrough === null || through > w.fetchedThrough) w.fetchedThrough = through;
  }

  /** The task started processing a batch. */
  batchStarted(): void {
    if (this.busy++ === 0) this.lastProgress = this.p.progress();
    this.lastBusyAt = this.p.clock.now();
  }

  /** The task finished processing a batch (settled or not). */
  batchEnded(): void {
    this.busy = Math.max(0, this.busy - 1);
    this.lastBusyAt = this.p.clock.now();
  }

  /** Checks every `intervalMs` until stopped. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  /** Stops checking. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check: the stuck partitions (reported to onStuck once), or none. */
  async check(): Promise<StuckPartition[]> {
    if (this.fired || !this.watched.size) return [];
    if (!this.p.running() || this.busyProgressing()) {
      this.lastBusyAt = this.p.clock.now();
      return [];
    }
    let offsets: PartitionOffsets[];
    try {
      offsets = await this.p.offsets();
    } catch (e) {
      this.p.log.debug({ err: describeError(e) }, 'progress watchdog: offsets unavailable, check skipped');
      return [];
    }
    const stuck = this.stuckOf(offsets);
    if (!stuck.length || this.fired || !this.p.running()) return [];
    this.fired = true;
    this.stop();
    this.p.onStuck(stuck);
    return stuck;
  }

  /** True when a batch is in progress and the task got on with its records since the last check (a slow batch, not a stuck one). */
  private busyProgressing(): boolean {
    const progress = this.p.progress();
    const moved = progress !== this.lastProgress;
    this.lastProgress = progress;
    return this.busy > 0 && moved;
  }

  /** The watched partitions with records to read and no fetched batch for the timeout. */
  private stuckOf(offsets: PartitionOffsets[]): StuckPartition[] {
    const now = this.p.clock.now();
    const out: StuckPartition[] = [];
    for (const o of offsets) {
      const w = this.watched.get(topicPartitionKey(o.topic, o.partition));
      if (!w) continue;
      const base = o.committed ?? o.low;
      const position = w.fetchedThrough !== null && w.fetchedThrough > base ? w.fetchedThrough : base;
      const idleMs = now - Math.max(w.lastFetchAt, this.lastBusyAt);
      if (o.high > position && idleMs >= this.p.timeoutMs)
        out.push({ topic: o.topic, partition: o.partition, position, highWatermark: o.high, idleMs });
    }
    return out;
  }
}
