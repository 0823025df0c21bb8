import { Client } from 'cassandra-driver';
import { AdjunctError } from '../errors';
import { validateKeyspaceName, validateTableName } from '../store/cassandra';
import { catalogExecute } from '../catalog/catalog-cql';
import { StoreEntry } from './store-catalog';

/** Who writes a base table: the store, its pipeline and the deployment (worker group) running it. */
export interface TableOwner {
  store: string;
  pipeline: string;
  groupId: string;
}

/**
 * One owner per base table, recorded in `adjunct_table_owners` with an insert-if-not-exists (LWT), so two stores
 * (or two deployments) can never write, reload or drop the same tables. Workers of one deployment share the claim.
 */
export class TableOwners {
  private readonly table: string;

  constructor(
    private readonly client: Client,
    keyspace: string,
  ) {
    this.table = `${validateKeyspaceName(keyspace)}.adjunct_table_owners`;
  }

  /** Claims baseTable for owner (idempotent for the same owner); throws TABLE_OWNED naming the other owner otherwise. */
  async claim(baseTable: string, owner: TableOwner, worker: string): Promise<void> {
    validateTableName(baseTable);
    const rs = await catalogExecute(
      this.client,
      `INSERT INTO ${this.table} (base_table, store, pipeline, group_id, worker, claimed_at) VALUES (?,?,?,?,?,toTimestamp(now())) IF NOT EXISTS`,
      [baseTable, owner.store, owner.pipeline, owner.groupId, worker],
      `claiming table ${baseTable} for store ${owner.store}`,
      'store',
    );
    const row = rs.first();
    if (row.get('[applied]')) return;
    // A lost LWT returns the existing row.
    this.requireSame(baseTable, { store: row.get('store'), pipeline: row.get('pipeline'), groupId: row.get('group_id') }, owner);
  }

  /** The recorded owner of baseTable, or null. */
  async ownerOf(baseTable: string): Promise<TableOwner | null> {
    const rs = await catalogExecute(
      this.client,
      `SELECT store, pipeline, group_id FROM ${this.table} WHERE base_table=?`,
      [baseTable],
      `reading the owner of table ${baseTable}`,
      'store',
    );
    const r = rs.first();
    return r ? { store: r.get('store'), pipeline: r.get('pipeline'), groupId: r.get('group_id') } : null;
  }

  /**
   * Throws unless `generation` of the store may be dropped: owner is the recorded owner of the base table, and the
   * generation is neither current nor being built (entry read fresh from the catalog).
   */
  async requireDroppable(entry: StoreEntry, generation: number, owner: TableOwner): Promise<void> {
    const recorded = await this.ownerOf(entry.baseTable);
    if (recorded === null) throw refuse(`table ${entry.baseTable} has no recorded owner`, entry, generation);
    this.requireSame(entry.baseTable, recorded, owner);
    if (generation === entry.currentGeneration || generation === entry.buildingGeneration) {
      throw refuse(`generation ${generation} is ${generation === entry.currentGeneration ? 'current' : 'being built'}`, entry, generation);
    }
  }

  private requireSame(baseTable: string, got: TableOwner, want: TableOwner): void {
    if (got.store === want.store && got.pipeline === want.pipeline && got.groupId === want.groupId) return;
    throw new AdjunctError(
      `Cassandra tables ${baseTable}_g* belong to store "${got.store}" (pipeline "${got.pipeline}", worker group "${got.groupId}"); ` +
        `store "${want.store}" (pipeline "${want.pipeline}", worker group "${want.groupId}") maps to the same tables. ` +
        `Rename the store, or, to hand the tables over, delete the owner row: DELETE FROM ${this.table} WHERE base_table='${baseTable}'`,
      { code: 'TABLE_OWNED', stage: 'config', context: { baseTable, owner: got, claimant: want } },
    );
  }
}

function refuse(why: string, entry: StoreEntry, generation: number): AdjunctError {
  return new AdjunctError(`refusing to drop table ${entry.baseTable}_g${generation} of store ${entry.store}: ${why}`, {
    code: 'DROP_REFUSED',
    stage: 'store',
    context: { store: entry.store, generation },
  });
}
