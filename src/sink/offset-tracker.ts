/**
 * One issued record of a partition; `begin`/`add` hand it in and `complete` takes it back. The offset is Kafka's
 * decimal string as fetched: nothing is parsed per record; the watermark (once per commit) is a bigint.
 */
export interface TrackedRecord {
  offset: string;
  observedStreamTime: number;
  done: boolean;
  /** Key + value bytes the entry keeps alive while held (0 when unknown). */
  size?: number;
}

/**
 * Tracks the records of one partition in offset order: which were issued, which are durable (written, skipped
 * or dead-lettered), and the writer's observed stream time right after each — so a commit never passes an unwritten
 * record and the persisted stream time matches the committed offset exactly.
 */
export class OffsetTracker {
  /** Issued records in offset order; the durable prefix's slots are released (null) as soon as it advances. */
  private readonly queue: (TrackedRecord | null)[] = [];
  private head = 0;
  /** The newest record of the durable prefix (its fields do not change once done). */
  private durable: TrackedRecord | null = null;
  private notDone = 0;
  /** Sum of the sizes of the entries from the oldest not durable to the newest. */
  private held = 0;

  /** Registers a record (in offset order) with the writer's observed stream time after its put decision. */
  begin(offset: string, observedStreamTime: number): TrackedRecord {
    return this.add({ offset, observedStreamTime, done: false });
  }

  /** Registers a caller-made entry (in offset order, not done): e.g. the in-flight record object itself. */
  add<T extends TrackedRecord>(e: T): T {
    this.queue.push(e);
    this.notDone++;
    this.held += e.size ?? 0;
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
    const q = this.queue;
    let head = this.head;
    let e = q[head];
    if (!e?.done) return;
    // Each record leaves the queue as it joins the durable prefix: nothing keeps a written record (its key and value
    // buffers) alive until a commit, so it dies young instead of being promoted to V8's old space.
    do {
      this.durable = e;
      this.held -= e.size ?? 0;
      q[head++] = null;
      e = q[head];
    } while (e?.done);
    // The released slots are dropped from the array once they are many.
    if (head > 1024 && head * 2 > q.length) {
      q.splice(0, head);
      head = 0;
    }
    this.head = head;
  }

  /** Number of records from the oldest one not durable yet to the newest issued one. */
  get inFlight(): number {
    return this.queue.length - this.head;
  }

  /**
   * Key + value bytes held from the oldest record not durable yet to the newest: records written behind a pending one
   * stay here (their offsets cannot be committed) after their write budget was returned.
   */
  get heldBytes(): number {
    return this.held;
  }

  /** Number of issued records that are not durable yet. */
  get notDurable(): number {
    return this.notDone;
  }

  /** Offset of the oldest record not yet durable, if any. */
  get oldestPending(): bigint | null {
    const e = this.queue[this.head];
    return e ? BigInt(e.offset) : null;
  }

  /** Next offset to commit (every earlier record durable) and the observed stream time as of it; null if nothing durable yet. */
  watermark(): { offset: bigint; observedStreamTime: number } | null {
    const d = this.durable;
    if (!d) return null;
    return { offset: BigInt(d.offset) + 1n, observedStreamTime: d.observedStreamTime };
  }
}
