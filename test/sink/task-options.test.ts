import { addDefaults, compileSinkTaskOptions, SINK_TASK_DEFAULTS, sinkTaskOptionsFromConfig } from '../../src/sink/task-options';
import { parseConfig } from '../../src/config';

describe('sink task options: options → defaults → compiled', () => {
  it('applies the defaults and keeps what was given', () => {
    const d = addDefaults({ pipeline: 'p', commitIntervalMs: 250 });
    expect(d.commitIntervalMs).toBe(250);
    expect(d.tolerance).toBe(SINK_TASK_DEFAULTS.tolerance);
    expect(d.stallTimeoutMs).toBeUndefined();
  });

  it('compiles once: frozen, with derived values', () => {
    const c = compileSinkTaskOptions({ pipeline: 'p', heartbeatIntervalMs: 3000, retryMaxDelayMs: 50 });
    expect(Object.isFrozen(c)).toBe(true);
    expect(c.budgetWaitMs).toBe(1000);
    expect(c.retryInitialDelayMs).toBe(50);
    expect(c.fetch).toEqual({ maxBytesPerPartition: 256 << 10, maxBytes: 1 << 20 });
  });

  it('refuses tolerance all without a dead-letter queue', () => {
    expect(() => compileSinkTaskOptions({ pipeline: 'p', tolerance: 'all' })).toThrow(/dead-letter queue/);
  });

  it('is taken from the validated config', () => {
    const cfg = parseConfig(`
kafka: { brokers: ["127.0.0.1:9092"], heartbeatInterval: 2s, fetch: { maxBytesPerPartition: 65536 } }
cassandra: { contactPoints: ["127.0.0.1"], localDataCenter: dc1, keyspace: ks }
pipelines:
  - name: p
    topics: [t]
    store: { name: s }
    errors: { tolerance: all, retryTimeout: 10s, stallTimeout: 5m, deadLetterQueue: { topic: dlq } }
`);
    const c = compileSinkTaskOptions(sinkTaskOptionsFromConfig(cfg, cfg.pipelines[0]));
    expect(c).toMatchObject({
      pipeline: 'p',
      tolerance: 'all',
      deadLetterQueue: true,
      retryTimeoutMs: 10_000,
      stallTimeoutMs: 300_000,
      heartbeatIntervalMs: 2_000,
      fetch: { maxBytesPerPartition: 65_536, maxBytes: 1 << 20 },
    });
  });
});
