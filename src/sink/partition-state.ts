import { OffsetTracker } from './offset-tracker';
import { PartitionWriter } from './partition-writer';
import { PartitionStatus } from './task-status';

/** Records between the committed offset and the log end. */
const lagOf = (high: bigint, committed: bigint): number => Number(high > committed ? high - committed : 0n);

/** What the task knows about one assigned partition: its writer, which records are durable, and its positions. */
export class PartitionState {
  /** Issued records and the durable watermark. */
  readonly tracker = new OffsetTracker();
  /** Last committed offset (next record to read), null before the first commit of this task. */
  committed: bigint | null = null;
  /** High watermark as of the last fetched batch. */
  high: bigint | null = null;
  /**
   * Offset the next fetched record should have: the group's committed offset at assignment, then last consumed + 1.
   * A batch starting past it, where it is below the log start, means records fell off the log.
   */
  expectedNext: bigint | null;
  /**
   * Set when kafkajs committed its out-of-range reset over the group's position and the task fails (policy fail):
   * the next commit puts the position before the gap back (last durable, else last committed, else as assigned).
   */
  restorePosition = false;
  /** Set when a given-up commit of this partition landed late (maybe over a later one): the next commit sends again. */
  resend = false;
  /** Records left pending on purpose (tolerance none, shutdown, failure): the commit never passes them. */
  stuck = 0;
  /**
   * Set when this worker may no longer own the partition: it was revoked, or the group rebalanced (a heartbeat said so)
   * while its records waited. Nothing more of it is issued, its retries end, rows not yet sent are dropped, and its
   * pending records are abandoned (never dead-lettered): the partition's next owner, maybe this worker again with a fresh
   * state, replays them from the committed offset. Kafka Connect closes a sink task's partitions on revocation alike.
   */
  fenced = false;
  /** The heartbeat failure (group rebalancing, member unknown) that fenced the partition, if one did. */
  fencedBy?: unknown;
  /**
   * Offset after the last record kafkajs fetched and passed over (transaction markers, aborted records): committed once
   * every record issued before it is durable. Null before any.
   */
  passed: bigint | null = null;
  /**
   * Set when the group's position at assignment was kafkajs's reset (-2) over a position nobody knows: the first batch
   * waits for the loss policy's decision (OffsetLossGuard.admit).
   */
  resetAtAssignment = false;
  /** The loss policy's decision on that reset while it is made: a batch and a pass-over that meet it together share it. */
  resetJudging?: Promise<boolean>;
  /** An offset-loss judgement the progress watchdog started (no batch showed the gap); the next batch waits for it. */
  judging?: Promise<boolean>;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly writer: PartitionWriter,
    /** The group's committed offset when the partition was assigned (next record to read), null when it had none. */
    readonly assigned: bigint | null,
  ) {
    this.expectedNext = assigned;
  }

  /** Notes records passed over up to `next` (exclusive, see `passed`): the partition is expected there from now on. */
  passOver(next: bigint): void {
    if (this.passed === null || next > this.passed) this.passed = next;
    if (this.expectedNext === null || next > this.expectedNext) this.expectedNext = next;
  }

  /** The offset to commit: after the last durable record; when restoring, the position before the gap at least. */
  commitPosition(): { offset: bigint; observedStreamTime?: number } | null {
    const wm = this.durablePosition();
    if (wm) return wm.offset > (this.committed ?? -1n) || this.restorePosition || this.resend ? wm : null;
    const before = this.committed ?? this.assigned;
    return this.restorePosition && before !== null ? { offset: before } : null;
  }

  /**
   * After the last durable record, or after the records passed over when nothing issued is pending: the stream time
   * as of it is that of the last durable record (passing over writes nothing), none when no record was written.
   */
  private durablePosition(): { offset: bigint; observedStreamTime?: number } | null {
    const wm = this.tracker.watermark();
    const passed = this.passed;
    if (passed === null || this.tracker.inFlight > 0 || (wm !== null && wm.offset >= passed)) return wm;
    return wm ? { offset: passed, observedStreamTime: wm.observedStreamTime } : { offset: passed };
  }

  /** True while some issued record is neither durable nor deliberately left pending. */
  get draining(): boolean {
    return this.tracker.notDurable > this.stuck;
  }

  /** Records end-lag against the committed offset, null when either is unknown. */
  lag(): number | null {
    return this.high !== null && this.committed !== null ? lagOf(this.high, this.committed) : null;
  }

  /** Status snapshot. */
  status(): PartitionStatus {
    const st = this.writer.observedStreamTime();
    return {
      topic: this.topic,
      partition: this.partition,
      committedOffset: this.committed?.toString() ?? null,
      endOffset: this.high?.toString() ?? null,
      lag: this.lag(),
      inFlight: this.tracker.inFlight,
      observedStreamTime: Number.isFinite(st) ? st : null,
    };
  }
}
