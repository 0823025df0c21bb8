import { cellsDataBytes, versionRowDataBytes } from '../../../src/store/cassandra/batch-data-size';

// Sizes Cassandra 5.0.6 reported in its batch size warnings for UNLOGGED batches of one-row partitions (per row).
describe("Cassandra's size of batch rows", () => {
  it('a global version row: valid_from and the writer as clustering values, the value cell, the partition key not counted', () => {
    expect(versionRowDataBytes(undefined, Buffer.alloc(100), Buffer.alloc(8), false)).toBe(186);
    expect(versionRowDataBytes(undefined, Buffer.alloc(140), Buffer.alloc(8), false)).toBe(226);
    expect(versionRowDataBytes(undefined, Buffer.alloc(100), Buffer.alloc(40), false)).toBe(218);
    expect(versionRowDataBytes(undefined, null, Buffer.alloc(8), false)).toBe(86);
  });

  it('a table created before the writer clustered counts the writer as a cell of its own', () => {
    expect(versionRowDataBytes(undefined, Buffer.alloc(100), Buffer.alloc(8), true)).toBe(206);
    expect(versionRowDataBytes(undefined, Buffer.alloc(140), Buffer.alloc(8), true)).toBe(246);
    expect(versionRowDataBytes(undefined, Buffer.alloc(100), Buffer.alloc(40), true)).toBe(238);
    expect(versionRowDataBytes(undefined, null, Buffer.alloc(8), true)).toBe(106);
  });

  it('a partitioned version row also counts its key, a clustering column', () => {
    expect(versionRowDataBytes(Buffer.alloc(20), Buffer.alloc(100), Buffer.alloc(8), false)).toBe(206);
    expect(versionRowDataBytes(Buffer.alloc(20), Buffer.alloc(100), Buffer.alloc(8), true)).toBe(226);
  });

  it('typed cells: 20 bytes each plus their value, null cells included', () => {
    const row = versionRowDataBytes(undefined, Buffer.alloc(100), Buffer.alloc(8), true);
    expect(row + cellsDataBytes(['a'.repeat(30), 5])).toBe(284);
    expect(row + cellsDataBytes([null, null])).toBe(246);
    expect(cellsDataBytes(['é'])).toBe(22);
    expect(cellsDataBytes([Buffer.alloc(7)])).toBe(27);
  });
});
