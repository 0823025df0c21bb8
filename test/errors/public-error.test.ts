import { AdjunctError, publicError, publicErrorText, scrubErrorText } from '../../src/errors';

class ResponseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResponseError';
  }
}

describe('publicError', () => {
  const driver = new ResponseError(
    'All host(s) tried for query failed. First host tried, 10.1.2.3:9042: Error: connect ECONNREFUSED 10.1.2.3:9042. See innerErrors.',
  );

  it("keeps adjunct's own words and cuts the wrapped driver message", () => {
    const e = new AdjunctError(`write to store rates at rates-ingest/3@17 failed: ${driver.message}`, {
      code: 'CASSANDRA_UNAVAILABLE',
      cause: driver,
    });
    expect(publicError(e)).toEqual({ code: 'CASSANDRA_UNAVAILABLE', message: 'write to store rates at rates-ingest/3@17 failed' });
    expect(publicErrorText(e)).toBe('CASSANDRA_UNAVAILABLE: write to store rates at rates-ingest/3@17 failed');
  });

  it('a message made only of the cause becomes generic wording; non-adjunct errors are internal', () => {
    const wrapped = new AdjunctError(`${driver.name}: ${driver.message}`, { code: 'STORE_ERROR', cause: driver });
    const p = publicError(wrapped);
    expect(p.code).toBe('STORE_ERROR');
    expect(p.message).not.toMatch(/host|10\.1\.2\.3|ECONNREFUSED|innerErrors/);
    expect(p.message.length).toBeGreaterThan(0);
    expect(publicError(driver)).toEqual({ code: 'INTERNAL', message: 'internal error' });
  });

  it('nested causes are cut too', () => {
    const mid = new AdjunctError(`reading catalog: ${driver.message}`, { code: 'CATALOG_ERROR', cause: driver });
    const top = new AdjunctError(`pipeline rates failed: ${mid.message}`, { code: 'WORKER_FAILED', cause: mid });
    expect(publicError(top).message).toBe('pipeline rates failed');
  });

  it('scrubs stack frames, paths and addresses, keeps the first line, caps the length', () => {
    const text =
      'bad thing at /home/app/node_modules/cassandra-driver/lib/x.js:10:5 from 192.168.0.1:9042 and [::1]:80\n    at Foo.bar (/app/dist/x.js:1:2)';
    const s = scrubErrorText(text);
    expect(s).toBe('bad thing at [path] from [address] and [address]');
    expect(scrubErrorText('x'.repeat(2000)).length).toBeLessThanOrEqual(501);
  });

  it('scrubs named hosts with a port, keeps ordinary words and numbers', () => {
    expect(scrubErrorText('All host(s) tried for query failed (tried: cassandra:9042, db-2.prod.internal:19042)')).toBe(
      'All host(s) tried for query failed (tried: [address], [address])',
    );
    expect(scrubErrorText('connect ECONNREFUSED localhost:8081')).toBe('connect ECONNREFUSED [address]');
    expect(scrubErrorText('rates/0@12: field rate: expected number at position 7')).toBe(
      'rates/0@12: field rate: expected number at position 7',
    );
  });
});

describe('DLQ context headers', () => {
  it('carry no stack frames, source paths or addresses', async () => {
    const { contextHeadersFor } = await import('../../src/sink/dlq-reporter');
    const cause = new SyntaxError('Unexpected token } in JSON at position 7 (from 172.16.0.9:9092, registry:8081)');
    const err = new AdjunctError('value-convert failed at rates/0@12: invalid JSON', { code: 'DECODE_FAILED', cause });
    const h = contextHeadersFor(
      { topic: 'rates', partition: 0, offset: '12', key: null, value: Buffer.from('x'), timestamp: '0' } as never,
      err,
      'value-convert' as never,
      'p',
    );
    const all = Object.values(h).join('\n');
    expect(all).not.toMatch(/\n\s+at |\.ts:\d+|\.js:\d+|172\.16\.0\.9/);
    expect(h['__connect.errors.exception.message']).toBe('value-convert failed at rates/0@12: invalid JSON');
    expect(h['__connect.errors.exception.stacktrace']).toBe('DECODE_FAILED: value-convert failed at rates/0@12: invalid JSON');
    expect(h['__connect.errors.cause.message']).toBe('Unexpected token } in JSON at position 7 (from [address], [address])');
  });
});
