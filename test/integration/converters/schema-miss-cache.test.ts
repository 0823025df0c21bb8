/**
 * RegistryConverter against the real schema registry, behind a counting HTTP proxy: unknown schema ids are cached as
 * misses (one registry call for a burst of bad records), known ids are cached, and a miss is asked again after its TTL.
 */
import * as http from 'http';
import { AddressInfo } from 'net';
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { RegistryConverter } from '../../../src/converters/registry-converter';
import { createRegistry } from '../../../src/converters';
import { BadRecordError } from '../../../src/errors';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { newRegistry, uniqueName } from '../helpers';

/** A pass-through proxy to the registry that counts requests per path. */
async function countingProxy(target: string): Promise<{ url: string; calls: Map<string, number>; close: () => Promise<void> }> {
  const base = new URL(target);
  const calls = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').replace(/^\/+/, '');
    calls.set(path.split('?')[0], (calls.get(path.split('?')[0]) ?? 0) + 1);
    const upstream = http.request(
      new URL(`${base.pathname.replace(/\/$/, '')}/${path}`, base),
      { method: req.method, headers: { ...req.headers, host: base.host } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections(); // the registry client keeps its sockets alive
      }),
  };
}

describe('RegistryConverter (avro) against the real registry', () => {
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  beforeAll(async () => {
    proxy = await countingProxy(stackEndpoints().registryUrl);
  });
  afterAll(async () => {
    await proxy.close();
  });

  it('200 records with one unknown schema id make one registry call; known ids decode; a miss is asked again after its TTL', async () => {
    const registry = newRegistry();
    const schema = { type: 'record', name: 'R', namespace: 'adjunct.test', fields: [{ name: 'x', type: 'int' }] };
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(schema) },
      { subject: `${uniqueName('avro_miss')}-value` },
    );
    const good = await registry.encode(id, { x: 7 });
    const badId = 2_000_000_000 - Math.floor(Math.random() * 1000);
    const bad = Buffer.from(good);
    bad.writeInt32BE(badId, 1);

    const converter = new RegistryConverter('avro', createRegistry({ url: proxy.url }), 'value-convert');
    const errors: unknown[] = [];
    for (let i = 0; i < 200; i++)
      await converter.decode(bad).then(
        () => errors.push('decoded'),
        (e) => errors.push(e),
      );
    expect(errors).toHaveLength(200);
    expect(errors.every((e) => e instanceof BadRecordError && e.code === 'UNKNOWN_SCHEMA' && /unknown schema id/.test(e.message))).toBe(
      true,
    );
    const badCalls = [...proxy.calls].filter(([p]) => p.includes(`ids/${badId}`)).reduce((a, [, c]) => a + c, 0);
    expect(badCalls).toBe(1);

    for (let i = 0; i < 50; i++) expect(await converter.decode(good)).toEqual({ x: 7 });
    const goodCalls = [...proxy.calls].filter(([p]) => p.includes(`ids/${id}`)).reduce((a, [, c]) => a + c, 0);
    expect(goodCalls).toBe(1);

    // A short TTL: after it passes, the id is asked again (it may have been registered meanwhile).
    const shortTtl = new RegistryConverter('avro', createRegistry({ url: proxy.url }), 'value-convert', 20);
    await expect(shortTtl.decode(bad)).rejects.toMatchObject({ code: 'UNKNOWN_SCHEMA' });
    await expect(shortTtl.decode(bad)).rejects.toMatchObject({ code: 'UNKNOWN_SCHEMA' });
    await new Promise((r) => setTimeout(r, 60));
    await expect(shortTtl.decode(bad)).rejects.toMatchObject({ code: 'UNKNOWN_SCHEMA' });
    const after = [...proxy.calls].filter(([p]) => p.includes(`ids/${badId}`)).reduce((a, [, c]) => a + c, 0);
    expect(after).toBe(3);
  });
});
