import * as fs from 'fs';
import * as path from 'path';
import { configReferenceMarkdown } from '../../src/config/reference';
import { configJsonSchema, formatDurationMs } from '../../src/config/json-schema';
import { Duration } from '../../src/config/schema';

describe('configuration reference', () => {
  it('docs/configuration.md is generated from the schema and up to date (run `npm run docs:config`)', () => {
    const doc = fs.readFileSync(path.resolve(__dirname, '../../docs/configuration.md'), 'utf8');
    expect(doc).toBe(configReferenceMarkdown());
    expect(doc).toContain('`pipelines[].store.historyRetention`');
    expect(doc).toContain('`pipelines[].errors.deadLetterQueue.topic`');
  });

  it('every duration shows its format and its default; NetworkTopologyStrategy and the token minimum are documented', () => {
    const doc = configReferenceMarkdown();
    const durationRows = doc.split('\n').filter((l) => l.includes('| duration |'));
    expect(durationRows.length).toBeGreaterThanOrEqual(15);
    for (const row of durationRows) expect(row).toMatch(/duration: milliseconds, or a number with ms, s, m, h, d or w/);
    expect(doc).toContain('| `worker.commitInterval` | duration |  | `"1s"` |');
    expect(doc).toContain('| `pipelines[].store.historyRetention` | duration |  | `"1d"` |');
    expect(doc).toContain('`cassandra.replication.class` | `NetworkTopologyStrategy`');
    expect(doc).toContain('`cassandra.replication.dataCenters` | map');
    expect(doc).toMatch(/`worker\.http\.adminToken`.*at least 16 characters/);
    const schema = configJsonSchema() as {
      properties: { worker: { properties: { http: { properties: { adminToken: { minLength: number } } } } } };
    };
    expect(schema.properties.worker.properties.http.properties.adminToken.minLength).toBe(16);
  });

  it('duration defaults render in a form the parser reads back to the same milliseconds', () => {
    for (const ms of [0, 1, 250, 1000, 1500, 60_000, 86_400_000, 604_800_000, 90_061_001])
      expect(Duration.parse(formatDurationMs(ms))).toBe(ms);
  });
});
