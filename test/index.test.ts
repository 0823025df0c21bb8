import * as adjunct from '../src';

describe('package entry', () => {
  it('exports the KIP-889 constants, stores, lookup and worker', () => {
    expect(adjunct.PUT_RETURN_CODE_VALID_TO_UNDEFINED).toBe(-1);
    expect(adjunct.PUT_RETURN_CODE_NOT_PUT).toBe(-9223372036854775808); // Kafka's VersionedKeyValueStore.PUT_RETURN_CODE_NOT_PUT
    expect(typeof adjunct.MemoryVersionedStore).toBe('function');
    expect(typeof adjunct.openCassandraVersionedStore).toBe('function');
    expect(typeof adjunct.openCassandraKeyValueStore).toBe('function');
    expect(typeof adjunct.openLookup).toBe('function');
    expect(typeof adjunct.Worker).toBe('function');
  });
  it('the memory reference store answers the KIP-889 motivating example', async () => {
    const s = new adjunct.MemoryVersionedStore<string, string>({ historyRetentionMs: 10_000 });
    expect(await s.put('EUR', 'b0', 0)).toBe(-1);
    expect(await s.put('EUR', 'b3', 3)).toBe(-1);
    expect((await s.get('EUR', 2))?.value).toBe('b0');
    expect(await s.put('EUR', 'b1', 1)).toBe(3);
  });
});

describe('deliberate public API', () => {
  it('names each runtime export; internals such as CqlExecutor and sleep stay inside', () => {
    const names = Object.keys(adjunct).sort();
    expect(names.length).toBeLessThanOrEqual(35);
    for (const internal of ['CqlExecutor', 'sleep', 'toNumber', 'STREAM_TIME_DDL', 'VersionedTableReader', 'PipelineTask'])
      expect(names).not.toContain(internal);
    for (const wanted of ['openLookup', 'Worker', 'loadConfigFile', 'AdjunctError', 'ERROR_CODES', 'skip', 'MemoryVersionedStore'])
      expect(names).toContain(wanted);
  });
});
