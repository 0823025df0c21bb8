/** CqlExecutor.rowInt64: a row's time is bound as a number only where the lean batch body writes it, else as 8 bytes. */
import type { Client } from 'cassandra-driver';
import { CqlExecutor } from '../../../src/store/cassandra';
import { int64Bytes } from '../../../src/store/cassandra/cql-types';
import { installLeanBatchRequest, leanBatchRequestInstalled } from '../../../src/store/cassandra/fast-batch-request';
import type { WriteBatcher } from '../../../src/store/cassandra/write-batcher';

const client = (encoding?: object) => ({ options: { encoding } }) as unknown as Client;
const batcher = (coalesces: boolean) => ({ coalesces }) as unknown as WriteBatcher;

describe('CqlExecutor.rowInt64', () => {
  it('gives 8 bytes while the lean batch body is not installed (the library API never installs it)', () => {
    expect(leanBatchRequestInstalled()).toBe(false);
    expect(new CqlExecutor(client(), { batcher: batcher(true) }).rowInt64(42)).toEqual(int64Bytes(42));
  });

  it('gives the number itself for batched rows once the body is installed, and 8 bytes everywhere else', () => {
    expect(installLeanBatchRequest()).toBe(true);
    const batched = new CqlExecutor(client(), { batcher: batcher(true) });
    expect(batched.rowInt64(1_796_103_975_183)).toBe(1_796_103_975_183);
    expect(batched.rowInt64(-5)).toBe(-5);
    // Not safe integers: the 8 bytes the encoder would give (the lowest prev is Long.MIN_VALUE).
    expect(batched.rowInt64(Number.NEGATIVE_INFINITY)).toEqual(Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 0]));
    expect(batched.rowInt64(2 ** 60)).toEqual(int64Bytes(2 ** 60));
    // Rows sent one by one (linger 0), or no batcher: each is an EXECUTE, whose values the driver's encoder writes.
    expect(new CqlExecutor(client(), { batcher: batcher(false) }).rowInt64(42)).toEqual(int64Bytes(42));
    expect(new CqlExecutor(client()).rowInt64(42)).toEqual(int64Bytes(42));
    // A client whose encoder wants BigInts refuses numbers.
    expect(new CqlExecutor(client({ useBigIntAsLong: true }), { batcher: batcher(true) }).rowInt64(42)).toEqual(int64Bytes(42));
  });
});
