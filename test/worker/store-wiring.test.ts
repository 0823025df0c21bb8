import { parseConfig } from '../../src/config';
import { BATCH_ROUNDS_IN_FLIGHT, recordsInFlight } from '../../src/worker/store-wiring';

const config = (extra: string) =>
  parseConfig(
    `
kafka: { brokers: [127.0.0.1:9092] }
cassandra:
  contactPoints: [127.0.0.1:9042]
${extra}
pipelines:
  - { name: rates, topics: [rates], store: { name: rates } }
`,
    { env: {} },
  );

describe('recordsInFlight', () => {
  it('lets maxInFlight full batches be in flight and as many again wait staged for grouping', () => {
    expect(BATCH_ROUNDS_IN_FLIGHT).toBe(2);
    expect(recordsInFlight(config(''))).toBe(2 * 64 * 64);
    expect(recordsInFlight(config('  writeBatch: { maxRows: 16 }\nworker: { maxInFlight: 8 }'))).toBe(2 * 8 * 16);
  });
  it('bounds records at maxInFlight when batching is off (every row is its own request)', () => {
    expect(recordsInFlight(config('  writeBatch: { linger: 0 }\nworker: { maxInFlight: 8 }'))).toBe(8);
  });
});
