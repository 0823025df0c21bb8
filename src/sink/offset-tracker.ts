/** One issued record of a partition; `begin` hands it out and `complete` takes it back. */
export interface TrackedRecord {
  offset: bigint;
  streamTime: number;
  done: boolean;
}

/**
 * Tracks the records of one partition in offset order: which were issued, which are durable (written, skipped
 * or dead-lettered), and the writer's stream time right after each — so a commit never passes an unwritten
 * record and the persisted stream time matches the committed offset exactly.
 */
export class OffsetTracker {
  private readonly queue: TrackedRecord[] = [];
  private head = 0;
  private durable: { offset: bigint; streamTime: number } | null = null;

  /** Registers a record (in offset order) with the writer's stream time after its put decision. */
  begin(offset: bigint, streamTimeAfter: number): TrackedRecord {
    const e: TrackedRecord = { offset, streamTime: streamTimeAfter, done: false };
    this.queue.push(e);
    return e;
  }

  /** Marks a record durable. */
  complete(e: TrackedRecord): void {
    if (e.done) return;
    e.done = true;
    this.advance();
  }

  private advance(): void {
    while (this.head < this.queue.length && this.queue[this.head].done) {
      const e = this.queue[this.head++];
      this.durable = { offset: e.offset, streamTime: e.streamTime };
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Number of records issued but not yet durable. */
  get inFlight(): number {
    return this.queue.length - this.head;
  }

  /** Offset of the oldest record not yet durable, if any. */
  get oldestPending(): bigint | null {
    return this.head < this.queue.length ? this.queue[this.head].offset : null;
  }

  /** Next offset to commit (every earlier record durable) and the stream time as of it; null if nothing durable yet. */
  watermark(): { offset: bigint; streamTime: number } | null {
    if (!this.durable) return null;
    return { offset: this.durable.offset + 1n, streamTime: this.durable.streamTime };
  }
}
