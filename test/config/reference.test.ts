import * as fs from 'fs';
import * as path from 'path';
import { configReferenceMarkdown } from '../../src/config/reference';

describe('configuration reference', () => {
  it('docs/configuration.md is generated from the schema and up to date (run `npm run docs:config`)', () => {
    const doc = fs.readFileSync(path.resolve(__dirname, '../../docs/configuration.md'), 'utf8');
    expect(doc).toBe(configReferenceMarkdown());
    expect(doc).toContain('`pipelines[].store.historyRetention`');
    expect(doc).toContain('`pipelines[].errors.deadLetterQueue.topic`');
  });
});
