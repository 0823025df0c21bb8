import { spawnSync } from 'child_process';
import * as path from 'path';

describe('npm run demo (scripted, non-interactive, against the real stack)', () => {
  it('joins every transaction with the rate valid at its time, including the late one, and serves it over HTTP', () => {
    const root = path.resolve(__dirname, '../../..');
    const r = spawnSync(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'tools/demo/demo.ts'], {
      cwd: root,
      env: { ...process.env, ADJUNCT_HTTP_PORT: '0', CI: 'true' },
      encoding: 'utf8',
      timeout: 240_000,
    });
    const out = r.stdout + r.stderr;
    expect(r.status).toBe(0);
    expect(out).toMatch(/rates: READY/);
    expect(out).toMatch(/a1 \S+ 100 EUR: rate 1\.0800/);
    expect(out).toMatch(/a4 \S+ 250 EUR: rate 1\.1100/);
    expect(out).toMatch(/a2 \S+ 75 EUR: rate 1\.0800 .*late: must join b0, not b3/);
    expect(out).toMatch(/a6 \S+ 10 EUR: rate 1\.0900/);
    expect(out).toMatch(/g2 \S+ 40 GBP: no rate valid at that time/);
    expect(out).toMatch(/→ 200 \{"store":"rates","key":"EUR","value":\{"rate":1\.08\}/);
    expect(out).toMatch(/Cleaning up/);
  });
});
