/** One issued record of a partition; `begin` hands it out and `complete` takes it back. */
export interface TrackedRecord {
  offset: bigint;
  observedStreamTime: number;
  done: boolean;
}

/**
 * Tracks the records of one partition in offset order: which were issued, which are durable (written, skipped
 * or dead-lettered), and the writer's observed stream time right after each — so a commit never passes an unwritten
 * record and the persisted stream time matches the committed offset exactly.
 */
export class OffsetTracker {
  private readonly queue: TrackedRecord[] = [];
  private head = 0;
  private durable: { offset: bigint; observedStreamTime: number } | null = null;
  private notDone = 0;

  /** Registers a record (in offset order) with the writer's observed stream time after its put decision. */
  begin(offset: bigint, observedStreamTime: number): TrackedRecord {
    const e: TrackedRecord = { offset, observedStreamTime, done: false };
    this.queue.push(e);
    this.notDone++;
    return e;
  }

  /** Marks a record durable. */
  complete(e: TrackedRecord): void {
    if (e.done) return;
    e.done = true;
    this.notDone--;
    this.advance();
  }

  private advance(): void {
    while (this.head < this.queue.length && this.queue[this.head].done) {
      const e = this.queue[this.head++];
      this.durable = { offset: e.offset, observedStreamTime: e.observedStreamTime };
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Number of records from the oldest one not durable yet to the newest issued one. */
  get inFlight(): number {
    return this.queue.length - this.head;
  }

  /** Number of issued records that are not durable yet. */
  get notDurable(): number {
    return this.notDone;
  }

  /** Offset of the oldest record not yet durable, if any. */
  get oldestPending(): bigint | null {
    return this.head < this.queue.length ? this.queue[this.head].offset : null;
  }

  /** Next offset to commit (every earlier record durable) and the observed stream time as of it; null if nothing durable yet. */
  watermark(): { offset: bigint; observedStreamTime: number } | null {
    if (!this.durable) return null;
    return { offset: this.durable.offset + 1n, observedStreamTime: this.durable.observedStreamTime };
  }
}
