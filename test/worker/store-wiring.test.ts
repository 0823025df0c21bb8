import { parseConfig } from '../../src/config';
import { Client } from 'cassandra-driver';
import {
  BATCH_BYTE_ROUNDS_IN_FLIGHT,
  BATCH_ROUNDS_IN_FLIGHT,
  bytesInFlight,
  recordsInFlight,
  StoreWiring,
} from '../../src/worker/store-wiring';

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

describe('bytesInFlight', () => {
  it('bounds key + value bytes at three batches of maxBytes per request slot with batching', () => {
    expect(BATCH_BYTE_ROUNDS_IN_FLIGHT).toBe(3);
    expect(bytesInFlight(config(''))).toBe(3 * 64 * 5120);
    expect(bytesInFlight(config('  writeBatch: { maxBytes: 4096 }\nworker: { maxInFlight: 8 }'))).toBe(3 * 8 * 4096);
  });
  it('takes worker.maxInFlightBytes when set, and 16 MiB without batching', () => {
    expect(bytesInFlight(config('worker: { maxInFlightBytes: 1048576 }'))).toBe(1 << 20);
    expect(bytesInFlight(config('  writeBatch: { linger: 0 }'))).toBe(16 << 20);
  });
});

describe('StoreWiring.keepsValueBytes', () => {
  const wiring = (pipeline: string) => {
    const cfg = parseConfig(
      `
kafka: { brokers: [127.0.0.1:9092] }
cassandra: { contactPoints: [127.0.0.1:9042], keyspace: ks }
registry: { url: http://127.0.0.1:8081 }
pipelines:
  - ${pipeline}
`,
      { env: {} },
    );
    return new StoreWiring({} as Client, cfg.cassandra, cfg.pipelines[0], undefined, undefined, 64, cfg.registry);
  };

  it('holds for a versioned store in the value converter format without typed columns, and nothing else', () => {
    expect(wiring('{ name: p, topics: [t], store: { name: s } }').keepsValueBytes).toBe(true);
    expect(wiring('{ name: p, topics: [t], store: { name: s, kind: kv } }').keepsValueBytes).toBe(false);
    expect(wiring('{ name: p, topics: [t], valueConverter: string, store: { name: s } }').keepsValueBytes).toBe(false);
    expect(wiring('{ name: p, topics: [t], store: { name: s, valueSerde: buffer } }').keepsValueBytes).toBe(false);
    expect(wiring('{ name: p, topics: [t], store: { name: s, columns: { rate: decimal } } }').keepsValueBytes).toBe(false);
    expect(wiring('{ name: p, topics: [t], valueConverter: avro, store: { name: s, typed: true } }').keepsValueBytes).toBe(false);
  });
});
