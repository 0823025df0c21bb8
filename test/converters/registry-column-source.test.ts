import { createServer, Server } from 'http';
import { AddressInfo } from 'net';
import { RegistryColumnSource } from '../../src/converters/registry-column-source';

/** A local HTTP endpoint standing in for a registry (or a proxy in front of one) that answers each request with `answer`. */
async function endpoint(answer: (res: import('http').ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => answer(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('RegistryColumnSource: answers that are not a schema', () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));
  const describeFrom = async (answer: (res: import('http').ServerResponse) => void) => {
    const { url, server } = await endpoint(answer);
    servers.push(server);
    return new RegistryColumnSource({ url }, 'rates-value').describe();
  };

  it('a body cut off after the headers (a registry restarting) is an outage (REGISTRY_UNAVAILABLE, retriable), not a bad record', async () => {
    await expect(
      describeFrom((res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('{"subject":"rates-value","version":');
        setTimeout(() => res.socket?.destroy(), 50); // after the client has the headers: the body read fails
      }),
    ).rejects.toMatchObject({ code: 'REGISTRY_UNAVAILABLE', retriable: true });
  });

  it("a proxy's HTML page with status 200 is an outage too", async () => {
    await expect(
      describeFrom((res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>maintenance</body></html>');
      }),
    ).rejects.toMatchObject({ code: 'REGISTRY_UNAVAILABLE', retriable: true, message: expect.stringContaining('rates-value') });
  });

  it('a subject the registry does not know (404) is the record’s problem (UNKNOWN_SCHEMA)', async () => {
    await expect(
      describeFrom((res) => {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error_code":40401,"message":"Subject not found."}');
      }),
    ).rejects.toMatchObject({ code: 'UNKNOWN_SCHEMA', retriable: false });
  });
});
