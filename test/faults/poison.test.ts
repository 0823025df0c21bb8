/**
 * Poison records mixed into valid ones: invalid JSON, truncated Avro, unknown schema id, wrong magic byte, missing
 * key field, 2 MB values and null keys. tolerance all + DLQ: every bad record is dead-lettered with its context
 * headers, every valid one is in the store, the worker keeps running. tolerance none: the worker stops at the first
 * bad record, names it, and commits nothing past it.
 */
import { randomInt } from 'crypto';
import { Admin, Kafka, Message } from 'kafkajs';
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { committedOffsets, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { newRegistry, readTopic, ReadRecord } from '../integration/helpers';
import { killWorker, spawnWorker } from '../integration/worker/processes';
import {
  checkBelowCommitted,
  exitWithin,
  expectTableEqualsReference,
  FAULT_RETENTION,
  genRecords,
  note,
  PROFILE,
  SIZES,
  useFaultStack,
  waitOutput,
  workerDoc,
} from './lib';

const BIG = 2 * 1024 * 1024;
const TOPIC_CONFIG = [{ name: 'max.message.bytes', value: String(8 * 1024 * 1024) }];

type Kind =
  | 'invalid-json'
  | 'missing-key-field'
  | 'null-key'
  | 'big-value'
  | 'deep-value'
  | 'truncated-avro'
  | 'unknown-schema-id'
  | 'wrong-magic'
  | 'json-into-avro';
const JSON_KINDS: Kind[] = ['invalid-json', 'missing-key-field', 'null-key', 'big-value', 'deep-value'];
const AVRO_KINDS: Kind[] = ['truncated-avro', 'unknown-schema-id', 'wrong-magic', 'json-into-avro'];
/** The `__connect.errors.stage` header expected for each kind: Kafka Connect's Stage enum names. */
const STAGE: Record<Kind, string> = {
  'invalid-json': 'VALUE_CONVERTER',
  'missing-key-field': 'TRANSFORMATION',
  'null-key': 'TRANSFORMATION',
  'big-value': 'VALUE_CONVERTER',
  'deep-value': 'TRANSFORMATION',
  'truncated-avro': 'VALUE_CONVERTER',
  'unknown-schema-id': 'VALUE_CONVERTER',
  'wrong-magic': 'VALUE_CONVERTER',
  'json-into-avro': 'VALUE_CONVERTER',
};

const header = (r: { headers?: ReadRecord['headers'] }, h: string) => r.headers?.[h]?.toString();

/** Inserts bad messages at random positions. */
function mix(valid: Message[], bad: Message[]): Message[] {
  const out = [...valid];
  for (const b of bad) out.splice(randomInt(0, out.length + 1), 0, b);
  return out;
}

async function createTopics(admin: Admin, topics: string[], partitions: number): Promise<void> {
  await admin.createTopics({
    topics: topics.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1, configEntries: TOPIC_CONFIG })),
    waitForLeaders: true,
  });
}

async function sendAll(kafka: Kafka, topic: string, messages: Message[]): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  // Small batches: a 2 MB record must fit in one produce request.
  for (let i = 0; i < messages.length; i += 200) await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 200) });
  await producer.disconnect();
}

/** JSON pipeline records: key `{"id": k}` (extract key.path id), JSON values; the bad kinds carry a `fault` header. */
function jsonTopicMessages(valid: number, bad: number, keys: number): Message[] {
  const good: Message[] = genRecords(valid, keys).map((r) => ({
    key: JSON.stringify({ id: r.key }),
    value: r.value,
    timestamp: String(r.timestamp),
  }));
  let bigs = 0;
  const ts = () => String(Date.now() - 30 * 60_000 + randomInt(60_000));
  const poison: Message[] = Array.from({ length: bad }, (_, j) => {
    let kind = JSON_KINDS[j % JSON_KINDS.length];
    if (kind === 'big-value' && bigs++ >= (PROFILE === 'full' ? 4 : 2)) kind = 'invalid-json';
    const headers = { fault: kind };
    switch (kind) {
      case 'invalid-json':
        return {
          key: JSON.stringify({ id: `k${randomInt(keys)}` }),
          value: `{"i": ${j}, "v": ` + 'x'.repeat(randomInt(0, 20)),
          timestamp: ts(),
          headers,
        };
      case 'missing-key-field':
        return { key: JSON.stringify({ name: `k${randomInt(keys)}` }), value: JSON.stringify({ j }), timestamp: ts(), headers };
      case 'null-key':
        return { key: null, value: JSON.stringify({ j }), timestamp: ts(), headers };
      case 'deep-value': {
        const depth = 1000 + randomInt(9000);
        return {
          key: JSON.stringify({ id: `k${randomInt(keys)}` }),
          value: '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
          timestamp: ts(),
          headers,
        };
      }
      default:
        return { key: JSON.stringify({ id: `k${randomInt(keys)}` }), value: Buffer.alloc(BIG, 'x'), timestamp: ts(), headers };
    }
  });
  // Valid records whose content names prototypes: stored as plain data, never reaching Object.prototype.
  const hostile = good
    .filter((m) => m.value !== null)
    .slice(0, 5)
    .map((m) => ({ ...m, value: '{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}, "v": 1}' }));
  return mix(
    good.map((m) => hostile.find((h) => h.timestamp === m.timestamp && h.key === m.key) ?? m),
    poison,
  );
}

describe(`fault: poison records (${PROFILE} profile)`, () => {
  const stack = useFaultStack();

  it('tolerance all: every bad record is dead-lettered with its context headers, every valid one is stored, the worker keeps running', async () => {
    const size = SIZES.poison;
    const n = names('poison');
    const tj = `${n.topic}-json`;
    const ta = `${n.topic}-avro`;
    await createTopics(stack.admin, [tj, ta], size.partitions);
    await createTopics(stack.admin, [n.dlq], 1);
    const t0 = Date.now();

    // JSON topic: ~60% of the valid records and half of the bad ones.
    const jsonMsgs = jsonTopicMessages(Math.round(size.valid * 0.6), size.bad / 2, size.keys);
    // Avro topic: values in the Confluent wire format through the registry.
    const registry = newRegistry();
    const schema = {
      type: 'record',
      name: 'Row',
      namespace: 'adjunct.faults',
      fields: [
        { name: 'id', type: 'string' },
        { name: 'v', type: 'int' },
        { name: 'note', type: 'string' },
      ],
    };
    const { id: schemaId } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: `${ta}-value` });
    const avroGood: Message[] = [];
    for (const r of genRecords(size.valid - Math.round(size.valid * 0.6), size.keys)) {
      if (r.value === null) {
        avroGood.push({ key: r.key, value: null, timestamp: String(r.timestamp) });
        continue;
      }
      const obj = { id: r.key, v: randomInt(1_000_000), note: 'n'.repeat(randomInt(30)) };
      avroGood.push({
        key: r.key,
        value: await registry.encode(schemaId, obj),
        timestamp: String(r.timestamp),
        headers: { src: JSON.stringify(obj) },
      });
    }
    const sample = await registry.encode(schemaId, { id: 'k1', v: 1, note: 'some note that will be cut' });
    const avroBad: Message[] = Array.from({ length: size.bad / 2 }, (_, j) => {
      const kind = AVRO_KINDS[j % AVRO_KINDS.length];
      const ts = String(Date.now() - 30 * 60_000 + randomInt(60_000));
      let value: Buffer;
      if (kind === 'truncated-avro') value = sample.subarray(0, 7);
      else if (kind === 'unknown-schema-id') {
        value = Buffer.from(sample);
        value.writeInt32BE(900_000_000 + randomInt(1_000_000), 1);
      } else if (kind === 'wrong-magic') {
        value = Buffer.from(sample);
        value[0] = 1 + randomInt(255);
      } else value = Buffer.from(JSON.stringify({ id: 'k1', v: j }));
      return { key: `k${randomInt(size.keys)}`, value, timestamp: ts, headers: { fault: kind } };
    });
    await sendAll(stack.kafka, tj, jsonMsgs);
    await sendAll(stack.kafka, ta, mix(avroGood, avroBad));
    note(`produced ${jsonMsgs.length} JSON + ${avroGood.length + avroBad.length} Avro records (${size.bad} bad) in ${Date.now() - t0} ms`);

    const errors = { tolerance: 'all', deadLetterQueue: { topic: n.dlq } };
    const file = writeConfigFile(
      workerDoc(n, [
        {
          name: 'pj',
          topics: [tj],
          keyConverter: 'json',
          valueConverter: 'json',
          extract: { key: { from: 'key', path: 'id' } },
          store: { name: 'sj', historyRetention: FAULT_RETENTION },
          errors,
        },
        {
          name: 'pa',
          topics: [ta],
          keyConverter: 'string',
          valueConverter: 'avro',
          store: { name: 'sa', historyRetention: FAULT_RETENTION },
          errors,
        },
      ]),
    );
    const w = spawnWorker(file);
    stack.procs.push(w);
    await waitOutput(w, /worker running/);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'pj'), tj, 300_000);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'pa'), ta, 300_000);
    expect(w.child.exitCode).toBeNull();

    // The DLQ holds exactly the bad records (by coordinates), each with the original bytes and context headers.
    const [jsonBack, avroBack] = [await readTopic(stack.kafka, stack.admin, tj), await readTopic(stack.kafka, stack.admin, ta)];
    const badBack = [...jsonBack.map((r) => ({ topic: tj, r })), ...avroBack.map((r) => ({ topic: ta, r }))].filter(
      ({ r }) => header(r, 'fault') !== undefined,
    );
    // Caught up means every bad record below the committed offsets is durable in the DLQ: read it to its end offsets.
    const dlq = await readTopic(stack.kafka, stack.admin, n.dlq);
    expect(dlq).toHaveLength(badBack.length);
    const byCoord = new Map(
      dlq.map((d) => [
        `${header(d, '__connect.errors.topic')}/${header(d, '__connect.errors.partition')}@${header(d, '__connect.errors.offset')}`,
        d,
      ]),
    );
    const problems: string[] = [];
    for (const { topic, r } of badBack) {
      const where = `${topic}/${r.partition}@${r.offset}`;
      const kind = header(r, 'fault') as Kind;
      const d = byCoord.get(where);
      if (!d) {
        problems.push(`${where} (${kind}) not in the DLQ`);
        continue;
      }
      if (header(d, '__connect.errors.stage') !== STAGE[kind])
        problems.push(`${where} (${kind}) stage ${header(d, '__connect.errors.stage')}`);
      if (header(d, '__connect.errors.connector.name') !== (topic === tj ? 'pj' : 'pa'))
        problems.push(`${where} connector ${header(d, '__connect.errors.connector.name')}`);
      if (
        !header(d, '__connect.errors.exception.message') ||
        !header(d, '__connect.errors.class.name') ||
        !header(d, '__connect.errors.exception.class.name')
      )
        problems.push(`${where} missing error headers`);
      if (header(d, 'fault') !== kind) problems.push(`${where} original headers lost`);
      if (!(d.value === null ? r.value === null : r.value !== null && d.value.equals(r.value)))
        problems.push(`${where} value bytes differ`);
      if (!(d.key === null ? r.key === null : r.key !== null && d.key.equals(r.key))) problems.push(`${where} key bytes differ`);
      if (problems.length > 20) break;
    }
    expect(problems).toEqual([]);
    const kinds = new Map<string, number>();
    for (const { r } of badBack) kinds.set(header(r, 'fault')!, (kinds.get(header(r, 'fault')!) ?? 0) + 1);
    note(`DLQ: ${dlq.length} records: ${[...kinds].map(([k, c]) => `${k}=${c}`).join(', ')}`);
    const msgSample = (kind: Kind) =>
      header(
        byCoord.get(
          `${badBack.find(({ r }) => header(r, 'fault') === kind)!.topic}/${badBack.find(({ r }) => header(r, 'fault') === kind)!.r.partition}@${badBack.find(({ r }) => header(r, 'fault') === kind)!.r.offset}`,
        )!,
        '__connect.errors.exception.message',
      );
    expect(msgSample('unknown-schema-id')).toMatch(/unknown schema id/);
    expect(msgSample('wrong-magic')).toMatch(/magic byte/);
    expect(msgSample('missing-key-field')).toMatch(/key field "id" is missing/);
    expect(msgSample('deep-value')).toMatch(/value nests deeper than 64 levels/);

    // Every valid record is in the stores, and nothing else.
    const dj = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, tj, n.keyspace, 'sj_g1', (r) =>
      header(r, 'fault') !== undefined
        ? null
        : {
            key: JSON.parse(r.key!.toString()).id,
            value: r.value === null ? null : JSON.parse(r.value.toString()),
            timestamp: r.timestamp,
          },
    );
    const da = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, ta, n.keyspace, 'sa_g1', (r) =>
      header(r, 'fault') !== undefined
        ? null
        : { key: r.key!.toString(), value: r.value === null ? null : JSON.parse(header(r, 'src')!), timestamp: r.timestamp },
    );
    note(`stores: JSON ${dj.actualVersions}/${dj.expectedVersions} versions, Avro ${da.actualVersions}/${da.expectedVersions} versions`);

    expect(w.child.exitCode).toBeNull();
    await killWorker(w, 'SIGTERM');
    expect((await w.exited).code).toBe(0);
    note(`poison (tolerance all): ${size.valid} valid + ${size.bad} bad, ${Date.now() - t0} ms`);
  });

  it('tolerance none: the worker stops at the first bad record, names topic/partition/offset, commits nothing past it', async () => {
    const size = SIZES.poison;
    const n = names('poisonnone');
    await createTopics(stack.admin, [n.topic], size.partitions);
    const msgs = jsonTopicMessages(size.valid, size.bad, size.keys);
    await sendAll(stack.kafka, n.topic, msgs);
    const file = writeConfigFile(
      workerDoc(n, [
        {
          name: 'strict',
          topics: [n.topic],
          keyConverter: 'json',
          valueConverter: 'json',
          extract: { key: { from: 'key', path: 'id' } },
          store: { name: 'st', historyRetention: FAULT_RETENTION },
        },
      ]),
    );
    const w = spawnWorker(file);
    stack.procs.push(w);
    const exit = await exitWithin(w, 120_000);
    expect(exit).toEqual({ code: 1, signal: null });

    const back = await readTopic(stack.kafka, stack.admin, n.topic);
    const firstBad = new Map<number, bigint>();
    for (const r of back) if (header(r, 'fault') !== undefined && !firstBad.has(r.partition)) firstBad.set(r.partition, r.offset);
    const m = new RegExp(`${n.topic}/(\\d+)@(\\d+)`).exec(w.output());
    expect(m).not.toBeNull();
    const [p, o] = [Number(m![1]), BigInt(m![2])];
    note(
      `tolerance none: stopped at ${n.topic}/${p}@${o}; first bad records per partition ${[...firstBad].map(([pp, oo]) => `${pp}@${oo}`).join(' ')}`,
    );
    expect(firstBad.get(p)).toBe(o);
    expect(w.output()).toMatch(/pipeline strict stopped at/);
    const committed = await committedOffsets(stack.admin, pipelineGroup(n.group, 'strict'), n.topic);
    for (const [pp, c] of committed)
      expect({ partition: pp, pastFirstBad: c > (firstBad.get(pp) ?? BigInt(Number.MAX_SAFE_INTEGER)) }).toEqual({
        partition: pp,
        pastFirstBad: false,
      });
    // Everything below the committed offsets is stored.
    const below = await checkBelowCommitted(
      stack.kafka,
      stack.admin,
      stack.client,
      n.topic,
      pipelineGroup(n.group, 'strict'),
      n.keyspace,
      'st_g1',
      (r) =>
        header(r, 'fault') !== undefined
          ? null
          : {
              key: JSON.parse(r.key!.toString()).id,
              value: r.value === null ? null : JSON.parse(r.value.toString()),
              timestamp: r.timestamp,
            },
    );
    expect(below.missing).toEqual([]);
    expect(below.streamTimeBehind).toEqual([]);
    note(`tolerance none: committed ${[...committed].map(([pp, c]) => `${pp}:${c}`).join(' ')}, ${below.checked} records below checked`);
  });
});
