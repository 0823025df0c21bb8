import * as fs from 'fs';
import * as path from 'path';
import { errors } from 'cassandra-driver';
import {
  ALL_ERROR_CODES,
  AdjunctError,
  ERROR_CODES,
  ErrorCode,
  isPipelineStage,
  isMissingTable,
  isRecordFailure,
  PIPELINE_STAGES,
  SUBSYSTEMS,
  wrapCassandraError,
} from '../../src/errors';
import { ExitCode, exitCodeOfError } from '../../src/cli/exit-codes';
import { statusOf } from '../../src/http/error-reply';

/** Every `code: 'X'` literal in src/ (the codes the code base raises). */
function codesRaisedInSource(): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) for (const m of fs.readFileSync(p, 'utf8').matchAll(/code: '([A-Z_]+)'/g)) found.add(m[1]);
    }
  };
  walk(path.resolve(__dirname, '../../src'));
  return found;
}

describe('ErrorCode table', () => {
  it('maps every code to an HTTP status, a CLI exit code and a retriable flag', () => {
    const exits = new Set<number>(Object.values(ExitCode));
    for (const c of ALL_ERROR_CODES) {
      const info = ERROR_CODES[c];
      expect([400, 404, 409, 500, 503]).toContain(info.http);
      expect(exits.has(info.exit)).toBe(true);
      expect(typeof info.retriable).toBe('boolean');
      expect(info.meaning.length).toBeGreaterThan(0);
    }
  });

  it('every code raised in src/ is in the table', () => {
    const missing = [...codesRaisedInSource()].filter((c) => !(c in ERROR_CODES));
    expect(missing).toEqual([]);
  });

  it('the HTTP API and the CLI read the same table', () => {
    for (const c of ALL_ERROR_CODES) {
      const e = new AdjunctError('x', { code: c, retriable: false });
      expect(statusOf(e)).toBe(ERROR_CODES[c].http);
      expect(exitCodeOfError(e)).toBe(ERROR_CODES[c].exit);
    }
    expect(exitCodeOfError(new AdjunctError('x', { code: 'UNKNOWN_STORE' }))).toBe(ExitCode.NOT_FOUND);
    expect(exitCodeOfError(new AdjunctError('x', { code: 'CASSANDRA_UNAVAILABLE' }))).toBe(ExitCode.UNAVAILABLE);
    expect(exitCodeOfError(new Error('x'))).toBe(ExitCode.FAILED);
  });

  it("the table's exit wins over the config stage: an unknown pipeline named on the command line is NOT_FOUND (3)", () => {
    expect(exitCodeOfError(new AdjunctError('x', { code: 'UNKNOWN_PIPELINE', stage: 'config' }))).toBe(ExitCode.NOT_FOUND);
    expect(exitCodeOfError(new AdjunctError('x', { code: 'INVALID_ARGUMENT', stage: 'config' }))).toBe(ExitCode.CONFIG_INVALID);
  });

  it('the retriable flag defaults to the table and follows the code', () => {
    const codes: ErrorCode[] = ['CASSANDRA_UNAVAILABLE', 'REGISTRY_UNAVAILABLE', 'BAD_RECORD', 'CONFIG_INVALID'];
    expect(codes.map((c) => new AdjunctError('x', { code: c }).retriable)).toEqual([true, true, false, false]);
  });

  it('the CLI no longer imports the HTTP layer for its exit codes', () => {
    const dir = path.resolve(__dirname, '../../src/cli');
    const src = fs
      .readdirSync(dir)
      .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
      .join('\n');
    expect(src).not.toMatch(/http\/error-reply/);
  });
});

describe('ErrorStage: pipeline stages and subsystems', () => {
  it('are disjoint, and only pipeline stages are record stages', () => {
    expect(PIPELINE_STAGES.filter((s) => (SUBSYSTEMS as readonly string[]).includes(s))).toEqual([]);
    expect(PIPELINE_STAGES.every((s) => isPipelineStage(s))).toBe(true);
    expect(SUBSYSTEMS.some((s) => isPipelineStage(s))).toBe(false);
  });
});

describe('record failures versus infrastructure failures', () => {
  it('tolerance applies to record failures only', () => {
    expect(isRecordFailure(new AdjunctError('x', { code: 'DECODE_FAILED' }))).toBe(true);
    expect(isRecordFailure(new AdjunctError('x', { code: 'MISSING_FIELD' }))).toBe(true);
    expect(isRecordFailure(new AdjunctError('x', { code: 'RECORD_REJECTED' }))).toBe(true);
    expect(isRecordFailure(new AdjunctError('x', { code: 'CASSANDRA_UNAVAILABLE' }))).toBe(false);
    expect(isRecordFailure(new AdjunctError('x', { code: 'CASSANDRA_ERROR' }))).toBe(false);
    expect(isRecordFailure(new AdjunctError('x', { code: 'RETRIES_EXHAUSTED' }))).toBe(false);
    expect(isRecordFailure(new Error('plain'))).toBe(false);
  });

  it('Cassandra: a mutation too large is the record, an unconfigured table or a refused login is the infrastructure', () => {
    const tooLarge = new errors.ResponseError(0x2200, 'Rejected an oversized mutation (20000000/16777216) for keyspace ks');
    const keyTooLong = new errors.ResponseError(0x2200, 'Key length of 70000 is longer than maximum of 65535');
    const dropped = new errors.ResponseError(0x2200, 'unconfigured table t_g1');
    const unauthorized = new errors.ResponseError(0x2100, 'User x has no MODIFY permission');
    expect(wrapCassandraError(tooLarge, 'writing').code).toBe('RECORD_REJECTED');
    expect(wrapCassandraError(keyTooLong, 'writing').code).toBe('RECORD_REJECTED');
    expect(isRecordFailure(wrapCassandraError(dropped, 'writing'))).toBe(false);
    // A table dropped under a write: a retriable stall that makes the worker re-follow the catalog, never a dead letter.
    expect(wrapCassandraError(dropped, 'writing')).toMatchObject({ code: 'TABLE_MISSING', retriable: true });
    expect(isMissingTable(dropped)).toBe(true);
    expect(isMissingTable(new errors.ResponseError(0x2200, 'table s_g2 does not exist'))).toBe(true); // Cassandra 4+ wording
    expect(isMissingTable(tooLarge)).toBe(false);
    expect(isRecordFailure(wrapCassandraError(unauthorized, 'writing'))).toBe(false);
    expect(wrapCassandraError(new errors.NoHostAvailableError({}), 'writing').code).toBe('CASSANDRA_UNAVAILABLE');
  });

  it('Cassandra: a value the driver cannot encode is the record; any other TypeError is not', () => {
    for (const message of [
      'Not a valid bigint, expected Long/Number/String/Buffer, obtained {}',
      'Expected Number, obtained NaN',
      'Invalid string representation of Uuid, it should be in the 00000000-0000-0000-0000-000000000000',
      "A map can't contain null or unset values",
    ]) {
      expect(wrapCassandraError(new TypeError(message), 'writing').code).toBe('RECORD_REJECTED');
    }
    for (const message of [
      "Cannot read properties of undefined (reading 'length')",
      'Not a valid type foo',
      'Target data type could not be guessed, you should use prepared statements for accurate type mapping. Value: 1',
    ]) {
      const e = wrapCassandraError(new TypeError(message), 'writing');
      expect(e.code).toBe('CASSANDRA_ERROR');
      expect(isRecordFailure(e)).toBe(false);
    }
  });
});
