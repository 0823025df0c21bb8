import { types } from 'cassandra-driver';
import { CellTypeError, isCqlColumnType, toCell } from '../../../src/store/cassandra/cql-types';
import { columnNameFor, explicitTypedColumns } from '../../../src/store/cassandra/typed-column-spec';

describe('typed columns: CQL types and cell conversion', () => {
  it('accepts only allow-listed type names', () => {
    expect(isCqlColumnType('decimal')).toBe(true);
    expect(isCqlColumnType('list<text>')).toBe(false);
    expect(isCqlColumnType('text); DROP TABLE t')).toBe(false);
  });

  it('converts values strictly to their column type', () => {
    expect(toCell('text', 'EUR')).toBe('EUR');
    expect(toCell('int', 7)).toBe(7);
    expect((toCell('bigint', '9007199254740993') as types.Long).toString()).toBe('9007199254740993');
    expect((toCell('decimal', 1.25) as types.BigDecimal).toString()).toBe('1.25');
    expect((toCell('decimal', '123.4500') as types.BigDecimal).toString()).toBe('123.4500');
    // Avro decimal bytes: unscaled 12345 with scale 4 = 1.2345
    expect((toCell('decimal', Buffer.from([0x30, 0x39]), 4) as types.BigDecimal).toString()).toBe('1.2345');
    expect((toCell('timestamp', 1_000) as Date).toISOString()).toBe('1970-01-01T00:00:01.000Z');
    expect((toCell('date', 19_000) as types.LocalDate).toString()).toBe('2022-01-08');
    expect(toCell('uuid', '123e4567-e89b-12d3-a456-426614174000')).toBeInstanceOf(types.Uuid);
    expect(toCell('double', null)).toBeNull();
    expect(toCell('double', undefined)).toBeNull();
  });

  it('refuses values of another type instead of coercing them', () => {
    expect(() => toCell('double', 'high')).toThrow(CellTypeError);
    expect(() => toCell('int', 2 ** 31)).toThrow(/does not fit CQL type int/);
    expect(() => toCell('text', { a: 1 })).toThrow(/object value does not fit/);
    expect(() => toCell('bigint', '1e3')).toThrow(CellTypeError);
    expect(() => toCell('uuid', 'nope')).toThrow(CellTypeError);
    expect(() => toCell('timestamp', 'not a date')).toThrow(CellTypeError);
  });

  it('derives snake_case column names and validates explicit mappings before any CQL', () => {
    expect(columnNameFor('sourceName')).toBe('source_name');
    expect(explicitTypedColumns({ rate: 'decimal', sourceName: 'text' })).toEqual([
      { field: 'rate', column: 'rate', type: 'decimal' },
      { field: 'sourceName', column: 'source_name', type: 'text' },
    ]);
    expect(() => explicitTypedColumns({ key: 'text' })).toThrow(/field "key": column name "key" is a column of the versioned layout/);
    expect(() => explicitTypedColumns({ rate: 'map<text,int>' })).toThrow(/unknown CQL type/);
  });
});
