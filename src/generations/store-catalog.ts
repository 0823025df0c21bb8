import { Client, types } from 'cassandra-driver';
import { AdjunctError, isAdjunctError, sleep } from '../errors';
import { CqlExecutor, tableExistsAgreed, validateKeyspaceName } from '../store/cassandra';
import { catalogExecute, numberOrNull } from '../catalog/catalog-cql';
import { generationTable } from './names';

/** What the catalog remembers about a store: its shape (so readers decode right) and its generations. */
export interface StoreEntry {
  store: string;
  kind: 'versioned' | 'kv';
  scope: 'partitioned' | 'global';
  keySerde: string;
  valueSerde: string;
  baseTable: string;
  historyRetentionMs: number;
  buckets: number | null;
  currentGeneration: number;
  previousGeneration: number | null;
  previousDropAfter: Date | null;
  buildingGeneration: number | null;
  /** A former previous generation whose table is being dropped: no worker may start writing it, it never comes back. */
  droppingGeneration: number | null;
  /** The highest generation ever begun (null in rows written before the column existed): numbers are never reused. */
  lastGeneration: number | null;
  updatedAt: Date | null;
}

/** The catalog-managed fields of an entry (everything but the store's shape). */
export type GenerationFields =
  | 'currentGeneration'
  | 'previousGeneration'
  | 'previousDropAfter'
  | 'buildingGeneration'
  | 'droppingGeneration'
  | 'lastGeneration'
  | 'updatedAt';

/** How a conditional update that failed transiently, or whose outcome is unknown (a timeout), is retried. */
export interface CasRetry {
  /** Attempts in all (the first included). */
  attempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  sleep: (ms: number) => Promise<void>;
}

/** Default retry of the catalog's conditional updates: six attempts over about six seconds. */
export const CAS_RETRY: CasRetry = { attempts: 6, initialDelayMs: 200, maxDelayMs: 3000, sleep };

/**
 * The store catalog in Cassandra: one row per store with its current, previous and building generation.
 * Switches are lightweight transactions (compare-and-set), so readers move from one complete generation to the next atomically.
 */
export class StoreCatalog {
  constructor(
    private readonly client: Client,
    private readonly keyspace: string,
    private readonly retry: CasRetry = CAS_RETRY,
  ) {
    validateKeyspaceName(keyspace);
  }

  private q(cql: string): string {
    return cql.replace(/\$T/g, `${this.keyspace}.adjunct_stores`);
  }

  private exec(cql: string, params: unknown[], what: string): Promise<types.ResultSet> {
    return catalogExecute(this.client, this.q(cql), params, what, 'store');
  }

  /**
   * Runs a conditional update (LWT) and returns whether it applied. A transient failure is retried with backoff, the
   * same statement each time: after a timeout (WriteTimeout of type CAS, the driver's OperationTimedOut) the outcome is
   * unknown, and the retry first completes any proposal of the earlier attempt left in flight (Paxos), then finds its
   * condition false if that one applied. Callers re-read the row when it did not apply: "already in the wanted state"
   * is success. The last failure is thrown when every attempt failed.
   */
  private async cas(cql: string, params: unknown[], what: string): Promise<boolean> {
    let delay = this.retry.initialDelayMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.exec(cql, params, what)).first().get('[applied]') === true;
      } catch (e) {
        if (!(isAdjunctError(e) && e.retriable) || attempt >= this.retry.attempts) throw e;
        await this.retry.sleep(delay);
        delay = Math.min(delay * 2, this.retry.maxDelayMs);
      }
    }
  }

  /** Registers a store (generation 1) unless it exists; returns the entry, failing if its shape changed. */
  async register(e: Omit<StoreEntry, GenerationFields>): Promise<StoreEntry> {
    await this.cas(
      `INSERT INTO $T (store, kind, scope, key_serde, value_serde, base_table, history_retention_ms, buckets, current_generation, updated_at) VALUES (?,?,?,?,?,?,?,?,1,toTimestamp(now())) IF NOT EXISTS`,
      [e.store, e.kind, e.scope, e.keySerde, e.valueSerde, e.baseTable, types.Long.fromNumber(e.historyRetentionMs), e.buckets],
      `registering store ${e.store}`,
    );
    const got = await this.get(e.store);
    if (!got) throw new AdjunctError(`store ${e.store} vanished from the catalog`, { code: 'CATALOG_ERROR', stage: 'store' });
    for (const k of ['kind', 'scope', 'keySerde', 'valueSerde', 'baseTable'] as const) {
      if (got[k] !== e[k]) {
        throw new AdjunctError(`store ${e.store} exists with ${k}=${got[k]} but the config says ${e[k]}; use a new store name or reload`, {
          code: 'STORE_SHAPE_MISMATCH',
          stage: 'config',
          context: { store: e.store, field: k },
        });
      }
    }
    if (got.buckets === null && e.buckets !== null) {
      // An entry from before partitioned buckets: its existing tables keep their layout (read from their schema);
      // tables created from now on use these buckets. The LWT makes concurrent workers agree on one number.
      await this.cas(`UPDATE $T SET buckets=? WHERE store=? IF buckets=null`, [e.buckets, e.store], 'recording buckets');
      got.buckets = (await this.get(e.store))?.buckets ?? null;
    }
    if (got.buckets !== e.buckets) {
      throw new AdjunctError(
        `store ${e.store} was created with buckets=${got.buckets} but the config says ${e.buckets}; buckets are fixed per store: use a new store name`,
        { code: 'STORE_SHAPE_MISMATCH', stage: 'config', context: { store: e.store, field: 'buckets' } },
      );
    }
    if (got.historyRetentionMs !== e.historyRetentionMs) {
      await this.exec(
        `UPDATE $T SET history_retention_ms=? WHERE store=?`,
        [types.Long.fromNumber(e.historyRetentionMs), e.store],
        'updating retention',
      );
      got.historyRetentionMs = e.historyRetentionMs;
    }
    return got;
  }

  /** Reads a store entry (one read at LOCAL_QUORUM: it sees every compare-and-set that has returned), or null if unknown. */
  async get(store: string): Promise<StoreEntry | null> {
    const rs = await this.exec(`SELECT * FROM $T WHERE store=?`, [store], `reading catalog entry ${store}`);
    const r = rs.first();
    return r ? rowToEntry(r) : null;
  }

  /** Lists every store. */
  async list(): Promise<StoreEntry[]> {
    const rs = await this.exec(`SELECT * FROM $T`, [], 'listing stores');
    return rs.rows.map(rowToEntry);
  }

  /** Starts building a new generation (or returns the one already being built, e.g. after a crash). */
  async beginBuild(store: string): Promise<number> {
    const e = await this.require(store);
    if (e.buildingGeneration !== null) return e.buildingGeneration;
    const next = nextGeneration(e);
    const applied = await this.cas(
      `UPDATE $T SET building_generation=?, last_generation=?, updated_at=toTimestamp(now()) WHERE store=? IF building_generation=null`,
      [next, next, store],
      'starting a reload',
    );
    if (!applied) {
      const again = await this.require(store);
      return again.buildingGeneration ?? next;
    }
    return next;
  }

  /**
   * Replaces the build of `lost` (its table dropped outside adjunct mid-build) with a build of a new number, by
   * compare-and-set, so of several workers finding it lost only one replaces it. Returns the generation being built
   * afterwards (the new one, or whichever replaced `lost` first), or null when no build is in progress any more.
   */
  async replaceBuild(store: string, lost: number): Promise<number | null> {
    const e = await this.require(store);
    if (e.buildingGeneration !== lost) return e.buildingGeneration;
    const next = Math.max(nextGeneration(e), lost + 1);
    const applied = await this.cas(
      `UPDATE $T SET building_generation=?, last_generation=?, updated_at=toTimestamp(now()) WHERE store=? IF building_generation=?`,
      [next, next, store, lost],
      'replacing a lost build',
    );
    if (applied) return next;
    return (await this.require(store)).buildingGeneration;
  }

  /**
   * Atomically makes the built `generation` current (compare-and-set on the current and building ones); keeps the old
   * one until keepMs from now. Every worker building it tries: one applies, the others find it already current.
   */
  async switchTo(store: string, generation: number, keepMs: number): Promise<{ previous: number | null; applied: boolean }> {
    const e = await this.require(store);
    if (e.currentGeneration === generation) return { previous: e.previousGeneration, applied: false };
    const applied = await this.cas(
      `UPDATE $T SET current_generation=?, previous_generation=?, previous_drop_after=?, building_generation=null, updated_at=toTimestamp(now()) WHERE store=? IF current_generation=? AND building_generation=?`,
      [generation, e.currentGeneration, new Date(Date.now() + keepMs), store, e.currentGeneration, generation],
      'switching generation',
    );
    if (applied) return { previous: e.currentGeneration, applied: true };
    const again = await this.require(store);
    if (again.currentGeneration === generation) return { previous: again.previousGeneration, applied: false };
    throw new AdjunctError(`generation switch of ${store} to ${generation} lost a race; state changed underneath`, {
      code: 'SWITCH_CONFLICT',
      stage: 'store',
      retriable: true,
    });
  }

  /**
   * Makes generation `to` current again. Idempotent: when `to` already is current nothing changes. `to` must be the
   * kept previous generation, and its table must still exist (one dropped outside adjunct would leave readers on
   * nothing); a build in progress is cancelled (readers never saw it).
   */
  rollbackTo(store: string, to: number, keepMs: number): Promise<{ current: number; previous: number | null; changed: boolean }> {
    return this.rollback(store, to, keepMs, 1);
  }

  private async rollback(
    store: string,
    to: number,
    keepMs: number,
    attempt: number,
  ): Promise<{ current: number; previous: number | null; changed: boolean }> {
    const e = await this.require(store);
    if (e.currentGeneration === to) {
      if (e.buildingGeneration === null) return { current: to, previous: e.previousGeneration, changed: false };
      if (attempt > 3)
        throw new AdjunctError(`cancelling the build of ${store} lost a race`, {
          code: 'SWITCH_CONFLICT',
          stage: 'store',
          retriable: true,
        });
      // Read again after the compare-and-set: another build may have begun, or this one been switched to, meanwhile.
      await this.cancelBuild(store, e.buildingGeneration);
      return this.rollback(store, to, keepMs, attempt + 1);
    }
    if (e.previousGeneration !== to) {
      throw new AdjunctError(
        `store ${store} cannot roll back to generation ${to}: current is ${e.currentGeneration}, previous is ${e.previousGeneration ?? 'none'}`,
        { code: 'NO_PREVIOUS_GENERATION', stage: 'store', context: { store, to } },
      );
    }
    const table = generationTable(e.baseTable, to);
    if (!(await this.tableExists(store, table))) {
      throw new AdjunctError(
        `store ${store} cannot roll back to generation ${to}: its table ${this.keyspace}.${table} no longer exists (dropped outside adjunct)`,
        { code: 'NO_PREVIOUS_GENERATION', stage: 'store', context: { store, to } },
      );
    }
    const applied = await this.cas(
      `UPDATE $T SET current_generation=?, previous_generation=?, previous_drop_after=?, building_generation=null, updated_at=toTimestamp(now()) WHERE store=? IF current_generation=? AND previous_generation=?`,
      [to, e.currentGeneration, new Date(Date.now() + keepMs), store, e.currentGeneration, to],
      'rolling back',
    );
    if (applied) return { current: to, previous: e.currentGeneration, changed: true };
    const again = await this.require(store);
    if (again.currentGeneration === to) return { current: to, previous: again.previousGeneration, changed: false };
    throw new AdjunctError(`rollback of ${store} to ${to} lost a race`, { code: 'SWITCH_CONFLICT', stage: 'store', retriable: true });
  }

  /** True when a store table exists as the nodes agree (`tableExistsAgreed`: a disagreement is an error, never "missing"). */
  private tableExists(store: string, table: string): Promise<boolean> {
    return tableExistsAgreed(new CqlExecutor(this.client, {}, { keyspace: this.keyspace, store }), this.keyspace, table);
  }

  /**
   * First step of dropping the previous generation once its keep time passed: moves it to `dropping_generation` with a
   * compare-and-set, so it can no longer be rolled back to, and no worker registers as its writer any more (each re-reads
   * the entry after writing its heartbeat). Returns whether this call marked it.
   */
  async markDropping(store: string, generation: number): Promise<boolean> {
    return this.cas(
      `UPDATE $T SET dropping_generation=?, previous_generation=null, previous_drop_after=null, updated_at=toTimestamp(now()) WHERE store=? IF previous_generation=? AND dropping_generation=null`,
      [generation, store, generation],
      'marking the previous generation for dropping',
    );
  }

  /**
   * Generations of `entry` whose tables exist though the row names them nowhere any more: a previous generation that a
   * second switch replaced within its keep time, a cancelled build, a build replaced after its table was lost. Only
   * numbers up to the highest the row has named count (a build begun after `entry` was read is never one). None of them
   * can be named again (rollback needs the previous generation; numbers are never reused), so the janitor drops them.
   */
  async orphans(entry: StoreEntry): Promise<number[]> {
    const named = [entry.currentGeneration, entry.previousGeneration, entry.buildingGeneration, entry.droppingGeneration];
    const highest = Math.max(entry.lastGeneration ?? 0, ...named.map((g) => g ?? 0));
    const rs = await catalogExecute(
      this.client,
      'SELECT table_name FROM system_schema.tables WHERE keyspace_name=?',
      [this.keyspace],
      'listing generation tables',
      'store',
    );
    const prefix = `${entry.baseTable.toLowerCase()}_g`;
    return rs.rows
      .map((r) => String(r.get('table_name')))
      .filter((t) => t.startsWith(prefix) && /^[1-9]\d*$/.test(t.slice(prefix.length)))
      .map((t) => Number(t.slice(prefix.length)))
      .filter((g) => g <= highest && !named.includes(g))
      .sort((a, b) => a - b);
  }

  /**
   * First step of dropping an orphaned generation (`orphans`): takes the dropping slot with a compare-and-set, so drops
   * run one at a time and a janitor that stops half-way is resumed like any other drop. Returns whether this call marked it.
   */
  markOrphanDropping(store: string, generation: number): Promise<boolean> {
    return this.cas(
      `UPDATE $T SET dropping_generation=?, updated_at=toTimestamp(now()) WHERE store=? IF dropping_generation=null`,
      [generation, store],
      'marking an orphaned generation for dropping',
    );
  }

  /** Last step of a drop: the table of `generation` is gone; clears the mark (compare-and-set, idempotent). */
  async finishDrop(store: string, generation: number): Promise<void> {
    await this.cas(
      `UPDATE $T SET dropping_generation=null, updated_at=toTimestamp(now()) WHERE store=? IF dropping_generation=?`,
      [store, generation],
      'clearing the dropping mark',
    );
  }

  /**
   * Abandons the build of `generation` (e.g. the operator cancels a reload) by compare-and-set, like every other write
   * of the row (a plain write could be shadowed by, or overwrite, a concurrent begin or switch). Returns whether this
   * call applied it (false: that build was no longer in progress, or its outcome was unknown; callers re-read).
   */
  cancelBuild(store: string, generation: number): Promise<boolean> {
    return this.cas(
      `UPDATE $T SET building_generation=null, updated_at=toTimestamp(now()) WHERE store=? IF building_generation=?`,
      [store, generation],
      'cancelling a reload',
    );
  }

  private async require(store: string): Promise<StoreEntry> {
    const e = await this.get(store);
    if (!e) throw new AdjunctError(`unknown store ${store}`, { code: 'UNKNOWN_STORE', stage: 'store', context: { store } });
    return e;
  }
}

/** The number of a new build: never one used before (a dropped generation's consumer group still holds its committed offsets). */
function nextGeneration(e: StoreEntry): number {
  return Math.max(e.currentGeneration, e.previousGeneration ?? 0, e.droppingGeneration ?? 0, e.lastGeneration ?? 0) + 1;
}

function rowToEntry(r: types.Row): StoreEntry {
  return {
    store: r.get('store'),
    kind: r.get('kind'),
    scope: r.get('scope'),
    keySerde: r.get('key_serde'),
    valueSerde: r.get('value_serde'),
    baseTable: r.get('base_table'),
    historyRetentionMs: numberOrNull(r.get('history_retention_ms')) ?? 0,
    buckets: numberOrNull(r.get('buckets')),
    currentGeneration: numberOrNull(r.get('current_generation')) ?? 1,
    previousGeneration: numberOrNull(r.get('previous_generation')),
    previousDropAfter: r.get('previous_drop_after') ?? null,
    buildingGeneration: numberOrNull(r.get('building_generation')),
    droppingGeneration: numberOrNull(r.get('dropping_generation')),
    lastGeneration: numberOrNull(r.get('last_generation')),
    updatedAt: r.get('updated_at') ?? null,
  };
}
