import { createHash } from 'crypto';
import { InvalidIdentifierError } from '../../errors';

/** Valid unquoted Cassandra keyspace/table name as adjunct accepts it. */
export const CQL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,47}$/;
/** Characters allowed in a store name (Kafka's legal topic/store characters). */
export const STORE_NAME_PATTERN = /^[A-Za-z0-9._-]{1,249}$/;
/** Characters allowed in a table-option key. */
export const OPTION_KEY_PATTERN = /^[a-z_]+$/;
/** Characters allowed in a table-option string value. */
export const OPTION_VALUE_PATTERN = /^[A-Za-z0-9_.\- ]*$/;

/** Throws InvalidIdentifierError unless name is a valid keyspace name. */
export function validateKeyspaceName(name: unknown): string {
  if (typeof name !== 'string' || !CQL_NAME_PATTERN.test(name)) {
    throw new InvalidIdentifierError(`invalid keyspace name ${JSON.stringify(name)}: must match ${CQL_NAME_PATTERN}`, { keyspace: name });
  }
  return name;
}

/** Throws InvalidIdentifierError unless name is a valid table name. */
export function validateTableName(name: unknown): string {
  if (typeof name !== 'string' || !CQL_NAME_PATTERN.test(name)) {
    throw new InvalidIdentifierError(`invalid table name ${JSON.stringify(name)}: must match ${CQL_NAME_PATTERN}`, { table: name });
  }
  return name;
}

/** Normalises a store name to a table name: lowercase, non [a-z0-9_] → '_', must start with a letter, at most 48 chars. */
export function tableNameForStore(storeName: unknown): string {
  if (typeof storeName !== 'string' || !STORE_NAME_PATTERN.test(storeName)) {
    throw new InvalidIdentifierError(`invalid store name ${JSON.stringify(storeName)}: must match ${STORE_NAME_PATTERN}`, { storeName });
  }
  const table = storeName.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (!CQL_NAME_PATTERN.test(table)) {
    throw new InvalidIdentifierError(
      `store name ${JSON.stringify(storeName)} normalises to ${JSON.stringify(table)}, which is not a valid table name (${CQL_NAME_PATTERN}); set tableName explicitly`,
      { storeName, table },
    );
  }
  return table;
}

/** Longest base table name of a store: `_g<generation>` is appended to it per generation (48 characters in all). */
export const MAX_BASE_TABLE_LENGTH = 40;

/**
 * The base table of a store (generation tables are `<base>_g<N>`). Names that normalise to at most 40 characters keep
 * their normalised form (so existing tables keep their names); longer ones become their first 31 characters, `_` and
 * 8 hex digits of the SHA-256 of the full store name, so two long names sharing a prefix get different tables.
 * Different names can still normalise alike (`a.b` and `A_b`): configs are checked for that, and the catalog records
 * which store owns a base table.
 */
export function baseTableForStore(storeName: unknown): string {
  const table = tableNameForStore(storeName);
  if (table.length <= MAX_BASE_TABLE_LENGTH) return table;
  const hash = createHash('sha256')
    .update(storeName as string, 'utf8')
    .digest('hex')
    .slice(0, 8);
  return `${table.slice(0, MAX_BASE_TABLE_LENGTH - 9)}_${hash}`;
}
