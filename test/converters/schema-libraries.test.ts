import { execFileSync } from 'child_process';
import * as path from 'path';
import { avscLibrary, protobufLibrary, registryLibrary } from '../../src/converters/schema-libraries';

const root = path.resolve(__dirname, '../..');
const LIBRARIES = /node_modules[\\/](avsc|protobufjs|@kafkajs[\\/]confluent-schema-registry)[\\/]/;

describe('schema libraries', () => {
  it('are not loaded with the public API (worker, stores, lookups): a pipeline without registry formats skips them', () => {
    const script = `require(${JSON.stringify(path.join(root, 'src/index.ts'))});
      const loaded = Object.keys(require.cache).filter((k) => ${LIBRARIES}.test(k));
      process.stdout.write(JSON.stringify(loaded.length));`;
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(out)).toBe(0);
  });

  it('load on first use, once', () => {
    expect(typeof avscLibrary().Type.forSchema).toBe('function');
    expect(typeof protobufLibrary().parse).toBe('function');
    expect(typeof registryLibrary().SchemaRegistry).toBe('function');
    expect(avscLibrary()).toBe(avscLibrary());
  });
});
