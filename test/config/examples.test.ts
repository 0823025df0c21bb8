import * as fs from 'fs';
import * as path from 'path';
import { loadConfigFile } from '../../src/config';

describe('example configs under config/', () => {
  const dir = path.resolve(__dirname, '../../config');
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
    it(`${f} validates`, () => {
      const { config } = loadConfigFile(path.join(dir, f), {});
      expect(config.pipelines.length).toBeGreaterThan(0);
    });
  }
});
