import { errors, types } from 'cassandra-driver';
import {
  cassandraErrorText,
  isMissingKeyspace,
  isMissingTable,
  isRetriableCassandraError,
  isTableNotOpenYet,
  mayBeMissingTable,
  StoreError,
  wrapCassandraError,
} from '../../src/errors';

const c = types.responseErrorCodes;

describe('Cassandra error classification (one case per server error code)', () => {
  it.each([
    ['unavailableException', c.unavailableException, true],
    ['overloaded', c.overloaded, true],
    ['isBootstrapping', c.isBootstrapping, true],
    ['writeTimeout', c.writeTimeout, true],
    ['readTimeout', c.readTimeout, true],
    ['readFailure', c.readFailure, true],
    ['writeFailure', c.writeFailure, true],
    ['serverError', c.serverError, false],
    ['syntaxError', c.syntaxError, false],
    ['unauthorized', c.unauthorized, false],
    ['invalid', c.invalid, false],
    ['configError', c.configError, false],
    ['badCredentials', c.badCredentials, false],
  ])('%s is retriable: %s', (_name, code, retriable) => {
    const e = new errors.ResponseError(code as number, 'from the server');
    expect(isRetriableCassandraError(e)).toBe(retriable);
    expect(wrapCassandraError(e, 'writing').retriable).toBe(retriable);
  });

  it('driver-side failures: no host and client timeouts are retriable, argument errors are not', () => {
    expect(isRetriableCassandraError(new errors.NoHostAvailableError({}))).toBe(true);
    expect(isRetriableCassandraError(new errors.OperationTimedOutError('timed out'))).toBe(true);
    expect(isRetriableCassandraError(new errors.ArgumentError('bad'))).toBe(false);
    expect(isRetriableCassandraError(Object.assign(new Error('socket'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isRetriableCassandraError(Object.assign(new Error('fs'), { code: 'ENOENT' }))).toBe(false);
    expect(isRetriableCassandraError('not an error')).toBe(false);
  });

  it('names a driver failure in one line without driver internals (no inner stack traces, no module paths)', () => {
    const timedOut = new errors.OperationTimedOutError('The host 127.0.0.1:9042 did not reply before timeout 12000 ms', '127.0.0.1:9042');
    const noHost = new errors.NoHostAvailableError({ '127.0.0.1:9042': timedOut, '127.0.0.2:9042': new errors.AuthenticationError('bad') });
    // The driver's own message embeds the inner errors with their stacks.
    expect(noHost.message).toMatch(/node_modules|\n/);
    const text = 'no Cassandra host answered (127.0.0.1:9042: OperationTimedOutError, 127.0.0.2:9042: AuthenticationError)';
    expect(cassandraErrorText(noHost)).toBe(text);
    expect(wrapCassandraError(noHost, 'writing a version').message).toBe(`writing a version: ${text}`);
    expect(cassandraErrorText(new errors.NoHostAvailableError({}))).toBe('All host(s) tried for query failed.');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9042'), { code: 'ECONNREFUSED' });
    expect(cassandraErrorText(new errors.NoHostAvailableError({ '127.0.0.1:9042': refused }))).toBe(
      'no Cassandra host answered (127.0.0.1:9042: ECONNREFUSED)',
    );
    expect(cassandraErrorText(new Error('first line\n    at frame (x.js:1:1)'))).toBe('first line');
  });

  it('a dropped table behind a prepared statement (every host answers "unconfigured table" to the re-prepare) is TABLE_MISSING, named', () => {
    const gone = (_host: string) => new errors.ResponseError(c.invalid, `unconfigured table s_g1`);
    const noHost = new errors.NoHostAvailableError({ '127.0.0.1:9042': gone('a'), '127.0.0.2:9042': gone('b') });
    expect(isMissingTable(noHost)).toBe(true);
    const wrapped = wrapCassandraError(noHost, 'write batch of 3 rows');
    expect(wrapped).toMatchObject({ code: 'TABLE_MISSING', retriable: true });
    expect(wrapped.message).toBe(
      'write batch of 3 rows: every Cassandra host refused the statement (127.0.0.1:9042: unconfigured table s_g1, 127.0.0.2:9042: unconfigured table s_g1)',
    );
    // One host down and one answering "unconfigured table" is an outage, not a missing table.
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const mixed = new errors.NoHostAvailableError({ '127.0.0.1:9042': gone('a'), '127.0.0.2:9042': refused });
    expect(isMissingTable(mixed)).toBe(false);
    expect(wrapCassandraError(mixed, 'w')).toMatchObject({ code: 'CASSANDRA_UNAVAILABLE', retriable: true });
    expect(isMissingTable(new errors.NoHostAvailableError({}))).toBe(false);
    // A host the driver skipped (recorded as a string, or null) says nothing about the statement.
    const withDown = new errors.NoHostAvailableError({ a: gone('a'), b: 'Host considered as DOWN', c: null } as never);
    expect(isMissingTable(withDown)).toBe(true);
    expect(isMissingTable(new errors.NoHostAvailableError({ b: 'Host considered as DOWN' } as never))).toBe(false);
  });

  it('an "unprepared" answer that reached the caller (the re-prepare failed too) may mean a dropped table; other failures do not', () => {
    const unprepared = () => new errors.ResponseError(c.unprepared, 'Prepared query with ID 3d59 not found');
    const wrapped = wrapCassandraError(new errors.NoHostAvailableError({ '127.0.0.1:9042': unprepared() }), 'write batch of 3 rows');
    expect(wrapped).toMatchObject({ code: 'CASSANDRA_UNAVAILABLE' });
    expect(mayBeMissingTable(wrapped)).toBe(true);
    expect(mayBeMissingTable(unprepared())).toBe(true);
    expect(mayBeMissingTable(new errors.ResponseError(c.invalid, 'unconfigured table s_g1'))).toBe(true);
    expect(mayBeMissingTable(new errors.OperationTimedOutError('timed out'))).toBe(false);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(mayBeMissingTable(wrapCassandraError(new errors.NoHostAvailableError({ a: unprepared(), b: refused }), 'w'))).toBe(false);
    expect(mayBeMissingTable(new errors.NoHostAvailableError({}))).toBe(false);
  });
});

describe('isTableNotOpenYet', () => {
  const notOpen = Object.assign(
    new errors.ResponseError(c.serverError, 'java.lang.IllegalArgumentException: Unknown CF bed4c660-f14c-11f1-aed4-6db08443c632'),
    {},
  );
  it("is Cassandra's server error for a table whose store is not open on the replica yet, however it is wrapped", () => {
    expect(isTableNotOpenYet(notOpen)).toBe(true);
    expect(isTableNotOpenYet(new StoreError('check table ks.t is usable', { code: 'CASSANDRA_ERROR', cause: notOpen }))).toBe(true);
    expect(isTableNotOpenYet(new errors.NoHostAvailableError({ '127.0.0.1:9042': notOpen }))).toBe(true);
  });
  it('is nothing else', () => {
    expect(isTableNotOpenYet(new errors.ResponseError(c.serverError, 'java.lang.NullPointerException'))).toBe(false);
    expect(isTableNotOpenYet(new errors.ResponseError(c.invalid, 'unconfigured table t'))).toBe(false);
    expect(isTableNotOpenYet(new errors.NoHostAvailableError({}))).toBe(false);
  });
});

describe('isMissingKeyspace', () => {
  const missing = new errors.ResponseError(c.invalid, "Keyspace 'ks_gone' does not exist");
  it("is Cassandra's invalid-request answer for a keyspace that does not exist, however it is wrapped", () => {
    expect(isMissingKeyspace(missing)).toBe(true);
    expect(isMissingKeyspace(new errors.ResponseError(c.invalid, 'Keyspace ks_gone does not exist'))).toBe(true);
    expect(isMissingKeyspace(wrapCassandraError(missing, 'reading ks_gone.t'))).toBe(true);
    expect(isMissingKeyspace(new errors.NoHostAvailableError({ '127.0.0.1:9042': missing }))).toBe(true);
  });
  it('is nothing else: a missing table, another code, a connection failure', () => {
    expect(isMissingKeyspace(new errors.ResponseError(c.invalid, 'unconfigured table t'))).toBe(false);
    expect(isMissingKeyspace(new errors.ResponseError(c.serverError, "Keyspace 'ks' does not exist"))).toBe(false);
    expect(isMissingKeyspace(new errors.NoHostAvailableError({}))).toBe(false);
    expect(isMissingKeyspace(new Error("Keyspace 'ks' does not exist"))).toBe(false);
  });
});
