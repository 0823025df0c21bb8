/** Settles a promise's outcome away (an operation's failure is its caller's to handle). */
const settle = (): void => undefined;

/** What of a key's operations is still under way: all of them, and the reads among them. */
interface Pending {
  all: Promise<void>;
  reads: Promise<void> | undefined;
}

const both = (a: Promise<void> | undefined, b: Promise<void>): Promise<void> => (a === undefined ? b : Promise.all([a, b]).then(settle));

/**
 * The order of a store's own API operations on each key. Their decisions (grace period, stream time) are made when
 * called; what they send or read is ordered here so that operations the caller did not await apply in call order, as
 * Kafka's synchronous store applies them: a read (a put's validTo, a delete's answer, a get) runs after every earlier
 * operation of the key, so it sees the earlier writes; a write waits only for the earlier reads, so none of them sees
 * it, while writes of a key still go out together (their client timestamps, fixed in call order, order them).
 * Different keys go on in parallel.
 */
export class KeyOrder {
  private readonly byKey = new Map<string, Pending>();

  /** Runs a write once the earlier reads of `key` have settled; resolves as op does. */
  write<T>(key: Buffer, op: () => Promise<T>): Promise<T> {
    return this.run(key, op, false);
  }

  /** Runs a read (or a read and its write) once every earlier operation of `key` has settled; resolves as op does. */
  read<T>(key: Buffer, op: () => Promise<T>): Promise<T> {
    return this.run(key, op, true);
  }

  /** Settles once every operation started so far has settled (a store's close waits for them). */
  idle(): Promise<void> {
    return Promise.all([...this.byKey.values()].map((p) => p.all)).then(settle);
  }

  private run<T>(key: Buffer, op: () => Promise<T>, reads: boolean): Promise<T> {
    const id = key.toString('latin1');
    const pending = this.byKey.get(id);
    const after = reads ? pending?.all : pending?.reads;
    const result = after === undefined ? op() : after.then(op);
    const done = result.then(settle, settle);
    const next: Pending = { all: both(pending?.all, done), reads: reads ? both(pending?.reads, done) : pending?.reads };
    this.byKey.set(id, next);
    void next.all.then(() => {
      if (this.byKey.get(id) === next) this.byKey.delete(id);
    });
    return result;
  }
}
