import { types } from 'cassandra-driver';
import { murmur3Halves } from '../../../src/store/cassandra/fast-murmur3';
import { createKeyspace } from '../helpers';
import { useStoreKeyspace } from './support';

jest.setTimeout(120_000);

const ks = useStoreKeyspace('it_murmur3');

/** Deterministic keys of every length up to 48 bytes, with bytes on both sides of 0x80 (the tail is sign-extended). */
function keys(): Buffer[] {
  const out: Buffer[] = [];
  let x = 12345;
  for (let n = 1; n <= 48; n++)
    for (let r = 0; r < 3; r++) {
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = r === 0 ? 0xff - i : (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
      out.push(b);
    }
  return out;
}

describe('lean Murmur3 token against Cassandra', () => {
  it("gives Cassandra's own token(key) for blob partition keys", async () => {
    await createKeyspace(ks.client, ks.keyspace);
    await ks.client.execute(`CREATE TABLE IF NOT EXISTS ${ks.keyspace}.t (key blob PRIMARY KEY, v int)`);
    const all = keys();
    await Promise.all(all.map((k) => ks.client.execute(`INSERT INTO ${ks.keyspace}.t (key, v) VALUES (?, 1)`, [k], { prepare: true })));
    const rs = await ks.client.execute(`SELECT key, token(key) AS t FROM ${ks.keyspace}.t`, [], { fetchSize: 1000 });
    expect(rs.rows).toHaveLength(all.length);
    for (const row of rs.rows) {
      const [h, l] = murmur3Halves(row.key as Buffer);
      const ours = BigInt.asIntN(64, (BigInt(h) << 32n) | BigInt(l)).toString();
      expect(`${(row.key as Buffer).toString('hex')} ${ours}`).toBe(
        `${(row.key as Buffer).toString('hex')} ${(row.t as types.Long).toString()}`,
      );
    }
  });
});
