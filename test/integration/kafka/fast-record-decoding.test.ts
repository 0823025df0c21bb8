/**
 * The faster kafkajs record decoding against the real broker: the same topic (records with and without headers, null
 * keys and values, a gzip batch) read by a Node process with the preload and by one with kafkajs's own decoding must
 * give the same records, and the first must really have used the replacements.
 */
import { execFile } from 'child_process';
import * as path from 'path';
import { promisify } from 'util';
import { CompressionTypes } from 'kafkajs';
import { createTopic, newKafka, NO_DUPLICATES, uniqueName } from '../helpers';

const run = promisify(execFile);
const root = path.resolve(__dirname, '..', '..', '..');

/** Reads the whole topic in a fresh Node process (preload first); prints which replacements ran and every record. */
async function readInChild(topic: string, decoding: 'fast' | 'kafkajs'): Promise<{ installed: unknown; records: unknown[] }> {
  const script = `
    require('./src/kafka/preload');
    const { newKafka, readTopic } = require('./test/integration/helpers');
    const { installFastRecordDecoding } = require('./src/kafka/record-decoding-install');
    (async () => {
      const kafka = newKafka();
      const admin = kafka.admin();
      await admin.connect();
      const rows = await readTopic(kafka, admin, ${JSON.stringify(topic)}, 60000);
      await admin.disconnect();
      const hex = (b) => (b === null ? null : b.toString('hex'));
      const headers = (h) => Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.map(hex) : hex(v)]));
      const records = rows.map((r) => ({ p: r.partition, o: String(r.offset), t: r.timestamp, k: hex(r.key), v: hex(r.value), h: headers(r.headers) }));
      console.log(JSON.stringify({ installed: installFastRecordDecoding(), records }));
    })().catch((e) => { console.error(e); process.exit(1); });
  `;
  const env = { ...process.env, ADJUNCT_KAFKAJS_DECODING: decoding === 'kafkajs' ? 'kafkajs' : '' };
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, env, maxBuffer: 64 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop() as string);
}

describe('fast kafkajs record decoding against the real broker', () => {
  it('reads exactly the records kafkajs reads, through the replacements', async () => {
    const kafka = newKafka();
    const topic = uniqueName('fast_decoding');
    await createTopic(kafka, topic, 2);
    const producer = kafka.producer(NO_DUPLICATES);
    await producer.connect();
    const base = Date.now() - 60_000;
    const plain = Array.from({ length: 300 }, (_, i) => ({
      key: i % 7 === 0 ? null : `k${i % 13}`,
      value: i % 11 === 0 ? null : JSON.stringify({ i }),
      timestamp: String(base + ((i * 37) % 500) - 250),
      partition: i % 2,
    }));
    const withHeaders = Array.from({ length: 20 }, (_, i) => ({
      key: `h${i}`,
      value: `v${i}`,
      partition: i % 2,
      headers: { trace: `t${i}`, multi: ['a', 'b'] },
    }));
    await producer.send({ topic, messages: plain.slice(0, 150) });
    await producer.send({ topic, messages: withHeaders });
    await producer.send({ topic, messages: plain.slice(150), compression: CompressionTypes.GZIP });
    await producer.disconnect();

    const [fast, own] = await Promise.all([readInChild(topic, 'fast'), readInChild(topic, 'kafkajs')]);
    expect(fast.installed).toEqual({ recordDecoder: true, batch: true });
    expect(own.installed).toEqual({ recordDecoder: false, batch: false });
    expect(fast.records).toHaveLength(320);
    expect(fast.records).toEqual(own.records);
  }, 120_000);
});
