import { AdjunctError, ConfigError, InvalidArgumentError, StoreError } from '../../src/errors';
import { bearerMatches, isLoopbackHost } from '../../src/http/auth';
import { checkHttpSettings } from '../../src/http/build-server';
import { errorBody, statusOf } from '../../src/http/error-reply';
import { LookupError } from '../../src/lookup';

describe('auth', () => {
  it('recognises loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h)).toBe(false);
  });

  it('matches bearer tokens exactly', () => {
    expect(bearerMatches('Bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('Bearer abcd', 'abc')).toBe(false);
    expect(bearerMatches('abc', 'abc')).toBe(false);
    expect(bearerMatches(undefined, 'abc')).toBe(false);
  });

  it('refuses a non-loopback bind without a token', () => {
    expect(() => checkHttpSettings({ host: '0.0.0.0', port: 1 })).toThrow(ConfigError);
    expect(() => checkHttpSettings({ host: '0.0.0.0', port: 1, adminToken: 'a'.repeat(16) })).not.toThrow();
    expect(() => checkHttpSettings({ host: '127.0.0.1', port: 1 })).not.toThrow();
  });
});

describe('error mapping', () => {
  it('maps the taxonomy to HTTP statuses', () => {
    expect(statusOf(new InvalidArgumentError('bad'))).toBe(400);
    expect(statusOf(new LookupError('x', { code: 'WRONG_STORE_KIND' }))).toBe(400);
    expect(statusOf(new LookupError('x', { code: 'UNKNOWN_STORE' }))).toBe(404);
    expect(statusOf(new AdjunctError('x', { code: 'UNKNOWN_PIPELINE' }))).toBe(404);
    expect(statusOf(new AdjunctError('x', { code: 'NO_PREVIOUS_GENERATION' }))).toBe(409);
    expect(statusOf(new StoreError('x', { code: 'CASSANDRA_ERROR', retriable: true }))).toBe(503);
    expect(statusOf(new StoreError('x', { code: 'CASSANDRA_ERROR' }))).toBe(500);
    expect(statusOf(new Error('x'))).toBe(500);
    expect(errorBody(new Error('secret detail'))).toEqual({ error: 'INTERNAL', message: 'internal error' });
    expect(errorBody(Object.assign(new Error('querystring/asOf must be integer'), { validation: [{}] }))).toEqual({ error: 'BAD_REQUEST', message: 'querystring/asOf must be integer' });
  });
});
