import { AdjunctError } from '../../src/errors';
import { CommittingConsumer, confirmedCommit } from '../../src/sink/confirmed-commit';
import { OffsetCommit } from '../../src/sink/offset-committer';

/** A kafkajs-like consumer whose runner is running (commits are sent and reported) or not (commits resolve unsent). */
function fakeConsumer() {
  const listeners: (() => void)[] = [];
  const sent: OffsetCommit[] = [];
  const c = {
    running: true,
    sent,
    consumer: {
      events: { COMMIT_OFFSETS: 'consumer.commit_offsets' },
      on: (_name: string, l: () => void) => {
        listeners.push(l);
        return () => undefined;
      },
      commitOffsets: async (offsets: OffsetCommit) => {
        if (!c.running) return; // kafkajs: "consumer not running, exiting"
        sent.push(offsets);
        for (const l of listeners) l();
      },
    } as unknown as CommittingConsumer,
  };
  return c;
}

describe('confirmed offset commits', () => {
  const offsets: OffsetCommit = [{ topic: 't', partition: 3, offset: '42' }];

  it('resolves when kafkajs reports the commit sent', async () => {
    const f = fakeConsumer();
    await confirmedCommit(f.consumer)(offsets);
    expect(f.sent).toEqual([offsets]);
  });

  it('fails (retriable) when kafkajs resolves without sending, while its consumer restarts; the next commit is sent', async () => {
    const f = fakeConsumer();
    const commit = confirmedCommit(f.consumer);
    f.running = false;
    const err = await commit(offsets).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdjunctError);
    expect(err).toMatchObject({ code: 'KAFKA_UNAVAILABLE', retriable: true, stage: 'commit', context: { partitions: ['t-3'] } });
    expect(f.sent).toEqual([]);
    f.running = true;
    await commit(offsets);
    expect(f.sent).toEqual([offsets]);
  });
});
