import { errors, types } from 'cassandra-driver';
import { cassandraErrorText, isRetriableCassandraError, wrapCassandraError } from '../../src/errors';

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
});
