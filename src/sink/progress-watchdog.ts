import { PartitionOffsets } from '../bootstrap/topic-offsets';
import { Clock } from '../clock';
import { SingleFlight } from '../concurrency';
import { describeError } from '../errors';
import { topicPartitionKey } from '../kafka/topic-partition';
import { Logger } from '../observability/logger';

/** An assigned partition with records to read whose position did not move for the watchdog's timeout. */
export interface StuckPartition {
  topic: string;
  partition: number;
  /** The task's position: after the last fetched or processed record, else the group's committed offset, else the log start. */
  position: bigint;
  highWatermark: bigint;
  /** Milliseconds since the position last moved (or the assignment, the task last getting on, or the records to read appearing). */
  idleMs: number;
  /** Why it is stuck: nothing read past the position, or a batch handed to the task that settles nothing. */
  reason: 'not-reading' | 'batch-not-settling';
}

/**
 * An opened partition, idle (no batch in progress) over two checks, whose log start passed the position the task
 * reached and whose out-of-range fetch kafkajs reset (its sentinel is the group's offset): retention deleted records
 * the task never read, and no batch will arrive to show the jump (the log holds nothing past its start).
 */
export interface BehindLogStart {
  topic: string;
  partition: number;
  /** Where the task's position was (after the last record fetched or processed). */
  position: bigint;
  logStart: bigint;
}

/** The task's consumer's fetch activity, for status and the stuck report. */
export interface FetchActivity {
  /** Fetch requests kafkajs completed since the task started. */
  fetches: number;
  /** When the last one completed (epoch ms), null before any. */
  lastFetchAt: number | null;
  /** Batches handed to the task and not finished yet. */
  batchesInProgress: number;
}

/** Collaborators of the watchdog. */
export interface ProgressWatchdogParts {
  clock: Clock;
  /** How long an assigned partition with records to read may keep its position. */
  timeoutMs: number;
  /** Log start/end and the group's committed offsets of the task's topics (one bounded attempt; a failure skips the check). */
  offsets: () => Promise<PartitionOffsets[]>;
  /** True while the task should be reading: RUNNING and not retrying a failing dependency (paused and stalled tasks wait on purpose). */
  reading: () => boolean;
  /** A count that grows while the task gets on with its records (records settled): a batch in progress that moves it is slow, not stuck. */
  progress: () => number;
  /** The consumer is stuck on these partitions: restart it from the committed offsets (called once). */
  onStuck: (stuck: StuckPartition[]) => void;
  /** Records were deleted past these partitions' positions (reported on every check while it lasts); the offset-loss policy decides once. */
  onBehindLogStart?: (behind: BehindLogStart[]) => void;
  log: Logger;
}

/** What the watchdog knows of one assigned partition. */
interface Watched {
  topic: string;
  partition: number;
  /** When it was assigned, or when its position last moved, or when it was last seen busy and getting on. */
  activeAt: number;
  /** Offset after the last record fetched or processed since assignment, null before any. */
  through: bigint | null;
  /** Batches of this partition being processed now. */
  busy: number;
  /** When a check first saw records to read beyond the position (null: none at the last check). */
  laggingSince: number | null;
  /** The position an idle check last found below the log start (reported from the next one on while nothing moved). */
  behindAt: bigint | null;
}

/**
 * Notices a consumer that stopped reading (kafkajs, after a broker failure, can keep a member in the group that never
 * fetches again, or fetch the same batch again and again), or a batch that stopped settling:
 * - an assigned partition whose log end is beyond the task's position, where the position did not move for
 *   `timeoutMs` and no batch of it in progress gets on with its records;
 * - a partition with a batch in progress that settled no record for `timeoutMs` (whatever kafkajs fetched).
 * Only while the task should be reading (RUNNING, no failing dependency being retried) and Kafka answers the offsets
 * look-up. It then reports the partitions once; the task's owner restarts the consumer from the committed offsets.
 * Nothing is skipped or committed here.
 */
export class ProgressWatchdog {
  private readonly watched = new Map<string, Watched>();
  private lastProgress = Number.NaN;
  private fired = false;
  /** The check in flight (one at a time). */
  private readonly checking = new SingleFlight<StuckPartition[]>();
  private timer?: NodeJS.Timeout;
  private fetches = 0;
  private lastFetchAt: number | null = null;

  constructor(private readonly p: ProgressWatchdogParts) {}

  /** A new assignment (group join): its partitions are watched from now on. */
  assigned(assignment: Record<string, number[]>): void {
    const now = this.p.clock.now();
    this.watched.clear();
    for (const [topic, partitions] of Object.entries(assignment))
      for (const partition of partitions)
        this.watched.set(topicPartitionKey(topic, partition), {
          topic,
          partition,
          activeAt: now,
          through: null,
          busy: 0,
          laggingSince: null,
          behindAt: null,
        });
  }

  /** kafkajs completed a fetch request (with or without records). */
  fetchCompleted(): void {
    this.fetches++;
    this.lastFetchAt = this.p.clock.now();
  }

  /** The consumer's fetch activity so far. */
  activity(): FetchActivity {
    let batchesInProgress = 0;
    for (const w of this.watched.values()) batchesInProgress += w.busy;
    return { fetches: this.fetches, lastFetchAt: this.lastFetchAt, batchesInProgress };
  }

  /** kafkajs fetched a batch of the partition up to `lastOffset` (also a batch of control records only). */
  fetched(topic: string, partition: number, lastOffset: string): void {
    this.moved(topic, partition, BigInt(lastOffset) + 1n);
  }

  /** The task started processing a batch of the partition. */
  batchStarted(topic: string, partition: number): void {
    const w = this.watched.get(topicPartitionKey(topic, partition));
    if (!w) return;
    w.busy++;
    w.behindAt = null;
  }

  /** The task finished a batch of the partition; `position` is the next offset it expects (null: unknown). */
  batchEnded(topic: string, partition: number, position: bigint | null): void {
    const w = this.watched.get(topicPartitionKey(topic, partition));
    if (!w) return;
    w.busy = Math.max(0, w.busy - 1);
    if (position !== null) this.moved(topic, partition, position);
  }

  private moved(topic: string, partition: number, through: bigint): void {
    const w = this.watched.get(topicPartitionKey(topic, partition));
    if (!w || (w.through !== null && through <= w.through)) return;
    w.through = through;
    w.activeAt = this.p.clock.now();
  }

  /** Checks every `intervalMs` until stopped. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  /** Stops checking; resolves once the check in flight, if any, has ended (its admin request done or timed out). */
  stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return this.checking.settled();
  }

  /** One check: the stuck partitions (reported to onStuck once), or none. */
  async check(): Promise<StuckPartition[]> {
    if (this.fired || this.checking.busy || !this.watched.size) return [];
    return this.checking.run(() => this.checkOnce());
  }

  private async checkOnce(): Promise<StuckPartition[]> {
    const now = this.p.clock.now();
    const progress = this.p.progress();
    const gotOn = progress !== this.lastProgress;
    this.lastProgress = progress;
    const reading = this.p.reading();
    for (const w of this.watched.values()) {
      if (!reading || (gotOn && w.busy > 0)) w.activeAt = now;
      // Two checks in a row means two while reading: a pause or a stall in between starts the count again.
      if (!reading) w.behindAt = null;
    }
    if (!reading) return [];
    let offsets: PartitionOffsets[];
    try {
      offsets = await this.p.offsets();
    } catch (e) {
      this.p.log.debug({ err: describeError(e) }, 'progress watchdog: offsets unavailable, check skipped');
      return [];
    }
    const behind = this.behindOf(offsets);
    if (behind.length && this.p.reading()) this.p.onBehindLogStart?.(behind);
    const stuck = this.stuckOf(offsets);
    if (!stuck.length || this.fired || !this.p.reading()) return [];
    this.fired = true;
    this.stop();
    this.p.onStuck(stuck);
    return stuck;
  }

  /**
   * Idle partitions whose log start passed the position they reached and whose group offset is kafkajs's reset
   * sentinel (it found that position out of range and committed its reset to the earliest offset; the task's own
   * commits are real offsets), on two checks in a row while reading with no batch between. The sentinel keeps a batch
   * kafkajs fetched from the position but has not handed over yet from being taken for a loss, unless retention also
   * passed that batch's end meanwhile (kafkajs then resets its next fetch): then those records are counted, loudly, too.
   */
  private behindOf(offsets: PartitionOffsets[]): BehindLogStart[] {
    const out: BehindLogStart[] = [];
    for (const o of offsets) {
      const w = this.watched.get(topicPartitionKey(o.topic, o.partition));
      if (!w) continue;
      const position = w.through;
      if (w.busy > 0 || position === null || position >= o.low || o.committed !== null) {
        w.behindAt = null;
        continue;
      }
      if (w.behindAt === position) out.push({ topic: o.topic, partition: o.partition, position, logStart: o.low });
      w.behindAt = position;
    }
    return out;
  }

  /** The watched partitions with records to read whose position did not move for the timeout. */
  private stuckOf(offsets: PartitionOffsets[]): StuckPartition[] {
    const now = this.p.clock.now();
    const out: StuckPartition[] = [];
    for (const o of offsets) {
      const w = this.watched.get(topicPartitionKey(o.topic, o.partition));
      if (!w) continue;
      const base = o.committed ?? o.low;
      const position = w.through !== null && w.through > base ? w.through : base;
      const lagging = o.high > position;
      // Records that arrived after a quiet spell are read from when a check first saw them, not from the last move.
      w.laggingSince = lagging ? (w.laggingSince ?? now) : null;
      // A batch in progress is judged by what it settles (whatever kafkajs fetched); otherwise by reading past the position.
      let idleMs: number;
      if (w.busy > 0) idleMs = now - w.activeAt;
      else if (w.laggingSince !== null) idleMs = now - Math.max(w.activeAt, w.laggingSince);
      else continue;
      if (idleMs >= this.p.timeoutMs)
        out.push({
          topic: o.topic,
          partition: o.partition,
          position,
          highWatermark: o.high,
          idleMs,
          reason: w.busy > 0 ? 'batch-not-settling' : 'not-reading',
        });
    }
    return out;
  }
}
