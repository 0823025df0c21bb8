import { AdjunctError } from '../../src/errors';
import { DropCatalog, GenerationDrop, mayWrite, WriterDirectory } from '../../src/generations/generation-drop';
import type { StoreEntry } from '../../src/generations/store-catalog';
import type { LiveWriter } from '../../src/generations/worker-registry';

/** The shared state of the fakes: one catalog row, the heartbeat rows (with expiry) and whether the table exists. */
class World {
  now = 1_000_000;
  /** Whether generation 1's table exists. */
  table = true;
  /** Tables of the other generations that exist. */
  extra = new Set<number>();
  rows = new Map<string, LiveWriter & { expiresAt: number }>();
  entry: StoreEntry = {
    store: 's',
    kind: 'versioned',
    scope: 'partitioned',
    keySerde: 'string',
    valueSerde: 'json',
    baseTable: 's',
    historyRetentionMs: 1000,
    buckets: null,
    currentGeneration: 2,
    previousGeneration: 1,
    previousDropAfter: new Date(999_000),
    buildingGeneration: null,
    droppingGeneration: null,
    lastGeneration: 2,
    updatedAt: null,
  };
}

/** Serialises the steps of two actors in a chosen order, so every interleaving of the protocol can be played. */
class Turns {
  private i = 0;
  private readonly waiting = new Map<string, () => void>();
  private readonly done = new Set<string>();

  constructor(private readonly order: string[]) {}

  async step<T>(actor: string, body: () => T): Promise<T> {
    await new Promise<void>((r) => {
      this.waiting.set(actor, r);
      this.pump();
    });
    const v = body();
    this.i++;
    this.pump();
    return v;
  }

  finished(actor: string): void {
    this.done.add(actor);
    this.pump();
  }

  private pump(): void {
    while (this.i < this.order.length && this.done.has(this.order[this.i])) this.i++;
    // Past the planned order, whoever is left runs.
    const next = this.i < this.order.length ? this.order[this.i] : [...this.waiting.keys()][0];
    const release = next === undefined ? undefined : this.waiting.get(next);
    if (release) {
      this.waiting.delete(next);
      release();
    }
  }
}

/** A linearizable fake catalog row (compare-and-set like an LWT), every step taken in `turns` order as `actor`. */
function fakeCatalog(w: World, turns: Turns, actor: string): DropCatalog {
  return {
    get: (store) => turns.step(actor, () => (store === 's' ? { ...w.entry } : null)),
    markDropping: (_store, g) =>
      turns.step(actor, () => {
        if (w.entry.previousGeneration !== g || w.entry.droppingGeneration !== null) return false;
        w.entry = { ...w.entry, droppingGeneration: g, previousGeneration: null, previousDropAfter: null };
        return true;
      }),
    orphans: (e) =>
      turns.step(actor, () => {
        const named = [e.currentGeneration, e.previousGeneration, e.buildingGeneration, e.droppingGeneration];
        const highest = Math.max(e.lastGeneration ?? 0, ...named.map((g) => g ?? 0));
        return [...(w.table ? [1] : []), ...w.extra].filter((g) => g <= highest && !named.includes(g)).sort((a, b) => a - b);
      }),
    markOrphanDropping: (_store, g) =>
      turns.step(actor, () => {
        if (w.entry.droppingGeneration !== null) return false;
        w.entry = { ...w.entry, droppingGeneration: g };
        return true;
      }),
    finishDrop: (_store, g) =>
      turns.step(actor, () => {
        if (w.entry.droppingGeneration === g) w.entry = { ...w.entry, droppingGeneration: null };
      }),
  };
}

/** Fake heartbeat rows with a TTL on the world's clock. */
function fakeDirectory(w: World, turns: Turns, actor: string): WriterDirectory {
  const key = (pipeline: string, worker: string, g: number) => `${pipeline}/${worker}/${g}`;
  return {
    beat: (x, ttl) =>
      turns.step(actor, () => {
        w.rows.set(key(x.pipeline, x.worker, x.generation), { ...x, updatedAt: null, expiresAt: w.now + ttl * 1000 });
      }),
    forget: (pipeline, worker, g) =>
      turns.step(actor, () => {
        w.rows.delete(key(pipeline, worker, g));
      }),
    live: (pipeline) => turns.step(actor, () => [...w.rows.values()].filter((r) => r.pipeline === pipeline && r.expiresAt > w.now)),
  };
}

/** Every way to interleave `a` steps of W with `b` steps of J. */
function interleavings(a: number, b: number): string[][] {
  if (a === 0) return [Array(b).fill('J')];
  if (b === 0) return [Array(a).fill('W')];
  return [...interleavings(a - 1, b).map((r) => ['W', ...r]), ...interleavings(a, b - 1).map((r) => ['J', ...r])];
}

const claim = { pipeline: 'p', store: 's', worker: 'w1', generation: 1, role: 'current' as const };

/** Plays one janitor pass against one writer registration in the given order. */
async function play(order: string[], w = new World()) {
  const turns = new Turns(order);
  const writer = new GenerationDrop(fakeCatalog(w, turns, 'W'), fakeDirectory(w, turns, 'W'), 10);
  const janitor = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10);
  const dropTable = (g: number) =>
    turns.step('J', () => {
      expect(g).toBe(1);
      w.table = false;
    });
  const [registered, dropped] = await Promise.all([
    writer
      .register(claim)
      .then(
        () => true,
        (e: unknown) => {
          expect(e).toBeInstanceOf(AdjunctError);
          expect((e as AdjunctError).code).toBe('GENERATION_RETIRED');
          return false;
        },
      )
      .finally(() => turns.finished('W')),
    janitor.pass('p', 's', new Date(w.now), dropTable).finally(() => turns.finished('J')),
  ]);
  return { registered, dropped, world: w };
}

describe('dropping a generation: the no-live-writer check is atomic', () => {
  it('mayWrite: current, building and the kept previous generation only', () => {
    const e = { currentGeneration: 3, buildingGeneration: 4, previousGeneration: 2 };
    expect([1, 2, 3, 4, 5].map((g) => mayWrite(e, g))).toEqual([false, true, true, true, false]);
    expect(mayWrite({ currentGeneration: 3, buildingGeneration: null, previousGeneration: null }, 2)).toBe(false);
  });

  it('with no writer: marks the expired previous generation, drops its table and clears the mark', async () => {
    const w = new World();
    const turns = new Turns([]);
    const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10);
    const dropped: number[] = [];
    expect(await drop.pass('p', 's', new Date(w.now), async (g) => void dropped.push(g))).toBe(1);
    expect(dropped).toEqual([1]);
    expect(w.entry).toMatchObject({ currentGeneration: 2, previousGeneration: null, droppingGeneration: null });
  });

  it('before the keep time: nothing is marked or dropped', async () => {
    const w = new World();
    w.entry.previousDropAfter = new Date(w.now + 1);
    const turns = new Turns([]);
    const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10);
    expect(await drop.pass('p', 's', new Date(w.now), async () => fail('dropped'))).toBeNull();
    expect(w.entry).toMatchObject({ previousGeneration: 1, droppingGeneration: null });
  });

  it.each(interleavings(2, 5).map((o) => [o.join('')]))(
    'a writer registering generation 1 against a janitor pass, order %s: never both registered and dropped',
    async (order) => {
      const { registered, dropped, world } = await play(order.split(''));
      // The invariant: a writer allowed to write never has its table dropped by the same pass.
      expect(registered && dropped !== null).toBe(false);
      expect(world.table).toBe(dropped === null);
      // Either way the generation is out of reach for good: marked (or dropped), never previous again.
      expect(world.entry.previousGeneration).toBeNull();
      expect(mayWrite(world.entry, 1)).toBe(false);
    },
  );

  it('the interleavings reach every safe outcome: writer first (no drop), janitor first (writer refused), both refused', async () => {
    const outcomes = new Set<string>();
    for (const o of interleavings(2, 5)) {
      const { registered, dropped } = await play(o);
      outcomes.add(`${registered ? 'registered' : 'refused'}/${dropped === null ? 'kept' : 'dropped'}`);
    }
    expect([...outcomes].sort()).toEqual(['refused/dropped', 'refused/kept', 'registered/kept']);
  });

  it('a live writer keeps the table; it learns the mark at its next heartbeat, forgets its row, and the next pass drops', async () => {
    const w = new World();
    const turns = new Turns([]);
    const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10);
    const writer = new GenerationDrop(fakeCatalog(w, turns, 'W'), fakeDirectory(w, turns, 'W'), 10);
    const dir = fakeDirectory(w, turns, 'W');
    await writer.register(claim); // previous generation: still writable
    const dropped: number[] = [];
    expect(await drop.pass('p', 's', new Date(w.now), async (g) => void dropped.push(g))).toBeNull();
    expect(w.entry.droppingGeneration).toBe(1);
    await expect(writer.register(claim)).rejects.toMatchObject({ code: 'GENERATION_RETIRED' });
    // The refused renewal kept the row (the task may still drain): still no drop.
    expect(await drop.pass('p', 's', new Date(w.now), async (g) => void dropped.push(g))).toBeNull();
    await dir.forget('p', 'w1', 1); // the task stopped
    expect(await drop.pass('p', 's', new Date(w.now), async (g) => void dropped.push(g))).toBe(1);
    expect(dropped).toEqual([1]);
    expect(w.entry.droppingGeneration).toBeNull();
  });

  it('a writer killed -9 keeps the table until its heartbeat expires', async () => {
    const w = new World();
    const turns = new Turns([]);
    const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10);
    await new GenerationDrop(fakeCatalog(w, turns, 'W'), fakeDirectory(w, turns, 'W'), 10).register(claim);
    expect(await drop.pass('p', 's', new Date(w.now), async () => fail('dropped under a live heartbeat'))).toBeNull();
    w.now += 10_001;
    expect(await drop.pass('p', 's', new Date(w.now), async () => undefined)).toBe(1);
  });

  it('a drop interrupted after the mark (janitor crashed) is resumed by the next pass, whoever runs it', async () => {
    const w = new World();
    w.entry = { ...w.entry, previousGeneration: null, previousDropAfter: null, droppingGeneration: 1 };
    const turns = new Turns([]);
    const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10);
    expect(await drop.pass('p', 's', new Date(w.now), async () => undefined)).toBe(1);
    expect(w.entry.droppingGeneration).toBeNull();
  });

  it('the current and the building generation are never marked', async () => {
    const w = new World();
    w.entry = { ...w.entry, previousGeneration: null, previousDropAfter: null, buildingGeneration: 3, lastGeneration: 3 };
    w.table = false;
    w.extra = new Set([2, 3]);
    const turns = new Turns([]);
    const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10);
    expect(await drop.pass('p', 's', new Date(w.now + 1e9), async () => fail('dropped'))).toBeNull();
    expect(w.entry.droppingGeneration).toBeNull();
  });

  describe('orphaned generations (a table the catalog row names nowhere)', () => {
    /** Generation 1 replaced as previous by a second switch (current 3, previous 2 kept), build 4 cancelled; tables 1 to 4 exist. */
    const orphaned = () => {
      const w = new World();
      w.entry = {
        ...w.entry,
        currentGeneration: 3,
        previousGeneration: 2,
        previousDropAfter: new Date(w.now + 3_600_000),
        lastGeneration: 4,
      };
      w.extra = new Set([2, 3, 4]);
      return w;
    };

    it('drops them one at a time, oldest first, through the dropping mark; never the current or kept previous one', async () => {
      const w = orphaned();
      const turns = new Turns([]);
      const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10, 0);
      const dropped: number[] = [];
      const dropTable = async (g: number) => {
        dropped.push(g);
        if (g === 1) w.table = false;
        else w.extra.delete(g);
      };
      expect(await drop.pass('p', 's', new Date(w.now), dropTable)).toBe(1);
      expect(await drop.pass('p', 's', new Date(w.now), dropTable)).toBe(4);
      expect(await drop.pass('p', 's', new Date(w.now), dropTable)).toBeNull();
      expect(dropped).toEqual([1, 4]);
      expect(w.entry).toMatchObject({ currentGeneration: 3, previousGeneration: 2, droppingGeneration: null });
      expect([...w.extra].sort()).toEqual([2, 3]);
    });

    it('keeps an orphan while a live worker still writes it (a cancelled build draining), and drops it once that worker forgets it', async () => {
      const w = orphaned();
      w.table = false;
      const turns = new Turns([]);
      const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10, 0);
      const dir = fakeDirectory(w, turns, 'W');
      await dir.beat({ pipeline: 'p', worker: 'w1', generation: 4, role: 'building' }, 10);
      const writer = new GenerationDrop(fakeCatalog(w, turns, 'W'), dir, 10);
      await expect(writer.register({ ...claim, generation: 4, role: 'building' })).rejects.toMatchObject({ code: 'GENERATION_RETIRED' });
      expect(await drop.pass('p', 's', new Date(w.now), async () => fail('dropped under a live writer'))).toBeNull();
      expect(w.entry.droppingGeneration).toBe(4);
      await dir.forget('p', 'w1', 4);
      expect(await drop.pass('p', 's', new Date(w.now), async () => undefined)).toBe(4);
    });

    it('never takes a table numbered above what the row has named (a build begun after the row was read)', async () => {
      const w = orphaned();
      w.table = false;
      w.extra = new Set([2, 3, 5]);
      const turns = new Turns([]);
      const drop = new GenerationDrop(fakeCatalog(w, turns, 'J'), fakeDirectory(w, turns, 'J'), 10, 0);
      expect(await drop.pass('p', 's', new Date(w.now), async () => fail('dropped'))).toBeNull();
      expect(w.entry.droppingGeneration).toBeNull();
    });

    it('looks for orphans at most once per scan interval', async () => {
      const w = orphaned();
      const turns = new Turns([]);
      const catalog = fakeCatalog(w, turns, 'J');
      const orphans = jest.spyOn(catalog, 'orphans');
      const drop = new GenerationDrop(catalog, fakeDirectory(w, turns, 'J'), 10, 60_000);
      const dropTable = async (g: number) => void (g === 1 ? (w.table = false) : w.extra.delete(g));
      expect(await drop.pass('p', 's', new Date(w.now), dropTable)).toBe(1);
      expect(await drop.pass('p', 's', new Date(w.now + 59_999), dropTable)).toBeNull();
      expect(await drop.pass('p', 's', new Date(w.now + 60_000), dropTable)).toBe(4);
      expect(orphans).toHaveBeenCalledTimes(2);
    });
  });
});
