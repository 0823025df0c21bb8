/**
 * Big records through a worker process at the default heap limit (bin/node-flags.js, also the Docker image's): no
 * out-of-memory, every record stored. Full profile: 1,000 records of 1 MB (Kafka's default maximum message size), what
 * in-flight writes hold. ci profile: 2,500 records with their own 60 KB keys (150 MB of keys), what the retention
 * clean-up tracks (each key once, bounded by bytes; holding them all overflowed this heap).
 */
import { Message } from 'kafkajs';
import { eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { killWorker } from '../integration/worker/processes';
import { note, PROFILE, SIZES, useFaultStack, waitOutput, workerDoc } from './lib';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { DEFAULT_NODE_FLAGS } = require('../../bin/node-flags.js') as { DEFAULT_NODE_FLAGS: string[] };

describe(`fault: 1 MB records at the container heap limit (${PROFILE} profile)`, () => {
  const stack = useFaultStack();

  it(`${SIZES.bigRecords.records} records of ${SIZES.bigRecords.valueBytes / 1e6} MB with 60 KB keys are all stored by a worker with a 128 MB old space`, async () => {
    const size = SIZES.bigRecords;
    const n = names('bigrec');
    const t0 = Date.now();
    // The broker's default max.message.bytes (~1 MB) is too small for a 1 MB value plus a 60 KB key.
    await stack.admin.createTopics({
      topics: [
        {
          topic: n.topic,
          numPartitions: size.partitions,
          replicationFactor: 1,
          configEntries: [{ name: 'max.message.bytes', value: String(4 << 20) }],
        },
      ],
      waitForLeaders: true,
    });
    const keyOf = (i: number) => `key-${String(i).padStart(6, '0')}-`.padEnd(size.keyBytes, 'k');
    const valueOf = (i: number) => JSON.stringify({ i, pad: ''.padEnd(size.valueBytes - 30, String.fromCharCode(97 + (i % 26))) });
    const base = Date.now() - 60 * 60_000;
    const producer = await stack.producer();
    // One record per partition and request: a record batch must stay below the topic's max.message.bytes.
    for (let i = 0; i < size.records; i += size.partitions) {
      const messages: Message[] = [];
      for (let j = i; j < Math.min(i + size.partitions, size.records); j++)
        messages.push({ key: keyOf(j), value: valueOf(j), timestamp: String(base + j), partition: j % size.partitions });
      await producer.send({ topic: n.topic, acks: -1, messages });
    }
    note(`produced ${size.records} records of ${valueOf(0).length + size.keyBytes} bytes in ${Date.now() - t0} ms`);

    const file = writeConfigFile(
      workerDoc(n, [
        { name: 'p', topics: [n.topic], valueConverter: 'string', store: { name: 's', valueSerde: 'string', historyRetention: '1h' } },
      ]),
    );
    // No NODE_OPTIONS: bin/adjunct.js re-executes itself with its default flags, as `adjunct run` and the image do.
    const w = stack.spawn(file, { NODE_OPTIONS: '' });
    await waitOutput(w, /worker running/);
    await eventually(
      async () => {
        if (w.child.exitCode !== null || w.child.signalCode !== null)
          throw new Error(`worker died (${w.child.exitCode ?? w.child.signalCode}): ${w.output().slice(-3000)}`);
        return true;
      },
      5_000,
      'worker alive',
    );
    const group = pipelineGroup(n.group, 'p');
    await Promise.race([
      waitCaughtUp(stack.admin, group, n.topic, 400_000),
      w.exited.then((e) => {
        throw new Error(`worker exited (${e.code ?? e.signal}) before catching up: ${w.output().slice(-3000)}`);
      }),
    ]);
    expect(w.child.exitCode).toBeNull();
    await killWorker(w, 'SIGTERM');
    expect((await w.exited).code).toBe(0);
    expect(w.output()).not.toMatch(/heap out of memory|Allocation failed/);

    // Every record is stored: one version per key, with its full value.
    let rows = 0;
    const bad: string[] = [];
    let pageState: string | undefined;
    do {
      const rs = await stack.client.execute(`SELECT key, valid_from, value FROM ${n.keyspace}.s_g1`, [], { fetchSize: 20, pageState });
      pageState = rs.pageState ?? undefined;
      for (const row of rs.rows) {
        rows++;
        const i = Number(row.get('valid_from').toString()) - base;
        if ((row.get('key') as Buffer).toString() !== keyOf(i) || (row.get('value') as Buffer).toString() !== valueOf(i))
          bad.push(`record ${i}`);
      }
    } while (pageState);
    expect(bad.slice(0, 5)).toEqual([]);
    expect(rows).toBe(size.records);
    note(`big records: ${rows}/${size.records} stored at ${DEFAULT_NODE_FLAGS.join(' ')}, ${Date.now() - t0} ms total`);
  });
});
