import { ConfigValidationError, parseConfig } from '../../src/config';
import { topicMatcher } from '../../src/config/topic-matcher';

const doc = (pipeline: string, extra = '') => `
kafka:
  brokers: [127.0.0.1:9092]
cassandra:
  contactPoints: [127.0.0.1:9042]
${extra}
pipelines:
  - name: rates
${pipeline}
    store: { name: rates }
`;

function problems(text: string): { path: string; line?: number; message: string }[] {
  try {
    parseConfig(text, { env: {} });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigValidationError);
    return (e as ConfigValidationError).problems;
  }
  throw new Error('expected the config to be rejected');
}

describe('config: topics, topicPattern and registry converters', () => {
  it('accepts a topicPattern instead of topics, with a 30 s default refresh interval', () => {
    const c = parseConfig(doc('    topicPattern: "rates-[a-z]+"'), { env: {} });
    expect(c.pipelines[0].topicPattern).toBe('rates-[a-z]+');
    expect(c.pipelines[0].topics).toBeUndefined();
    expect(c.pipelines[0].topicRefreshInterval).toBe(30_000);
    expect(parseConfig(doc('    topicPattern: "r.*"\n    topicRefreshInterval: 5s'), { env: {} }).pipelines[0].topicRefreshInterval).toBe(
      5000,
    );
  });

  it('rejects an invalid regex with its YAML path and line', () => {
    const ps = problems(doc('    topicPattern: "rates-(["'));
    expect(ps).toHaveLength(1);
    expect(ps[0].path).toBe('pipelines[0].topicPattern');
    expect(ps[0].line).toBe(9);
    expect(ps[0].message).toMatch(/invalid regular expression/);
  });

  it('requires exactly one of topics and topicPattern', () => {
    expect(problems(doc('')).map((p) => `${p.path}: ${p.message}`)).toEqual([
      'pipelines[0].topics: set exactly one of "topics" (a list) or "topicPattern" (a regex)',
    ]);
    const both = problems(doc('    topics: [rates]\n    topicPattern: "r.*"'));
    expect(both.map((p) => p.path)).toEqual(['pipelines[0].topicPattern']);
  });

  it('rejects a dead-letter queue topic the pipeline would consume itself', () => {
    const dlq = '    errors: { tolerance: all, deadLetterQueue: { topic: rates-dlq } }';
    expect(problems(doc(`    topicPattern: "rates-.*"\n${dlq}`))[0]).toMatchObject({
      path: 'pipelines[0].errors.deadLetterQueue.topic',
      message: expect.stringMatching(/matches topicPattern/),
    });
    expect(problems(doc(`    topics: [rates, rates-dlq]\n${dlq}`))[0]).toMatchObject({
      path: 'pipelines[0].errors.deadLetterQueue.topic',
      message: expect.stringMatching(/also in topics/),
    });
    expect(() => parseConfig(doc(`    topicPattern: "rates-[0-9]+"\n${dlq}`), { env: {} })).not.toThrow();
  });

  it.each(['json-schema', 'protobuf'])('%s converters need a registry section', (conv) => {
    const ps = problems(doc(`    topics: [rates]\n    keyConverter: ${conv}`));
    expect(ps.map((p) => `${p.path}: ${p.message}`)).toEqual([
      `pipelines[0].keyConverter: ${conv} converter needs a top-level "registry" section`,
    ]);
    const ok = parseConfig(
      doc(`    topics: [rates]\n    valueConverter: ${conv}`, 'registry: { url: "http://127.0.0.1:8081/apis/ccompat/v7" }'),
      { env: {} },
    );
    expect(ok.pipelines[0].valueConverter).toBe(conv);
  });
});

describe('topicMatcher', () => {
  it('matches whole topic names only, like Java Pattern.matches', () => {
    const m = topicMatcher('rates-[a-z]+');
    expect(m('rates-eur')).toBe(true);
    expect(m('rates-eur-v2')).toBe(false);
    expect(m('xrates-eur')).toBe(false);
    expect(topicMatcher('a|b')('ab')).toBe(false);
    expect(topicMatcher('a|b')('b')).toBe(true);
  });

  it('never matches Kafka internal topics', () => {
    const all = topicMatcher('.*');
    expect(all('__consumer_offsets')).toBe(false);
    expect(all('__transaction_state')).toBe(false);
    expect(all('_schemas')).toBe(true);
  });
});
