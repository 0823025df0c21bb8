/** One issued record of a partition. */
interface Entry {
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
  private readonly queue: Entry[] = [];
  private head = 0;
  private readonly byOffset = new Map<bigint, Entry>();
  private durable: { offset: bigint; streamTime: number } | null = null;

  constructor(initialStreamTime = Number.NEGATIVE_INFINITY) {
    this.initialStreamTime = initialStreamTime;
  }
  private readonly initialStreamTime: number;

  /** Registers a record (in offset order) with the writer's stream time after its put decision. */
  begin(offset: bigint, streamTimeAfter: number): void {
    const e: Entry = { offset, streamTime: streamTimeAfter, done: false };
    this.queue.push(e);
    this.byOffset.set(offset, e);
  }

  /** Marks a record durable. */
  complete(offset: bigint): void {
    const e = this.byOffset.get(offset);
    if (!e) return;
    e.done = true;
    this.byOffset.delete(offset);
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
    return { offset: this.durable.offset + 1n, streamTime: Math.max(this.durable.streamTime, this.initialStreamTime) };
  }
}
