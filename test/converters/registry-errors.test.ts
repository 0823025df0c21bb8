import { classifyRegistryError } from '../../src/converters/registry-errors';

/** An error shaped as @kafkajs/confluent-schema-registry's ResponseError (mappersmith's response status and text). */
function responseError(status: number, text: string): Error {
  return Object.assign(new Error(`adjunct - ${text}`), { name: 'ResponseError', status });
}

describe('classifyRegistryError', () => {
  it('only the registry saying it does not know the id makes the record bad (UNKNOWN_SCHEMA)', () => {
    for (const status of [404, 422]) {
      const e = classifyRegistryError(responseError(status, 'Schema 7 not found (40403)'), 'value-convert', 7);
      expect(e).toMatchObject({ code: 'UNKNOWN_SCHEMA', retriable: false, stage: 'value-convert' });
    }
  });

  it('refused credentials, rate limits, 5xx, unanswered requests and timeouts are outages (retriable), never bad records', () => {
    const cases: [Error, RegExp][] = [
      [responseError(401, 'Unauthorized'), /refused the credentials \(HTTP 401\)/],
      [responseError(403, 'Forbidden'), /refused the credentials \(HTTP 403\)/],
      [responseError(429, 'Too Many Requests'), /unavailable/],
      [responseError(503, 'Service Unavailable'), /unavailable/],
      // mappersmith turns a request that never got an answer into status 400 with the socket's message.
      [responseError(400, 'connect ECONNREFUSED 127.0.0.1:8081'), /unavailable/],
      [responseError(400, 'Timeout (10000ms)'), /unavailable/],
      [Object.assign(new Error('getaddrinfo ENOTFOUND registry'), { code: 'ENOTFOUND' }), /unavailable/],
      [new Error('socket hang up'), /unavailable/],
    ];
    for (const [cause, message] of cases) {
      const e = classifyRegistryError(cause, 'value-convert', 7);
      expect({ code: e.code, retriable: e.retriable }).toEqual({ code: 'REGISTRY_UNAVAILABLE', retriable: true });
      expect(e.message).toMatch(message);
      expect(e.message).toContain('schema 7');
    }
  });

  it('a fetched schema that does not parse is DECODE_FAILED (the record names an unusable schema)', () => {
    const e = classifyRegistryError(new Error('unknown type: com.example.Missing'), 'value-convert', 9);
    expect(e).toMatchObject({ code: 'DECODE_FAILED', retriable: false });
    expect(e.message).toBe('schema 9 unusable: unknown type: com.example.Missing');
  });
});
