import { errors, types } from 'cassandra-driver';
import { isRetriableCassandraError, wrapCassandraError } from '../../src/errors';

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
});
