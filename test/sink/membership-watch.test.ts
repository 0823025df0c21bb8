import { ManualClock } from '../../src/clock';
import { MembershipWatch } from '../../src/sink/membership-watch';

/** A refusal as kafkajs gives it up: a non-retriable error wrapping the protocol error (its `type`). */
function refused(type: string): Error {
  return Object.assign(new Error('KafkaJSNonRetriableError'), { cause: Object.assign(new Error(`refused: ${type}`), { type }) });
}

describe('MembershipWatch', () => {
  it('asks for a re-join only once refusals of the membership have lasted the grace, then again after another grace', () => {
    const clock = new ManualClock();
    const watch = new MembershipWatch(clock, 10_000);
    watch.commitFailed(refused('UNKNOWN_MEMBER_ID'));
    clock.advance(9_999);
    watch.commitFailed(refused('UNKNOWN_MEMBER_ID'));
    expect(watch.rejoinError()).toBeUndefined();
    clock.advance(1);
    const e = watch.rejoinError();
    expect((e as { type?: string }).type).toBe('UNKNOWN_MEMBER_ID');
    // Handed out once: the batch after it does not throw again until another grace of refusals.
    expect(watch.rejoinError()).toBeUndefined();
    clock.advance(10_000);
    expect((watch.rejoinError() as { type?: string }).type).toBe('UNKNOWN_MEMBER_ID');
  });

  it('a commit that goes through, or a join, ends the watch', () => {
    const clock = new ManualClock();
    const watch = new MembershipWatch(clock, 1_000);
    watch.commitFailed(refused('ILLEGAL_GENERATION'));
    watch.current();
    clock.advance(5_000);
    expect(watch.rejoinError()).toBeUndefined();
    watch.commitFailed(refused('FENCED_INSTANCE_ID'));
    clock.advance(1_000);
    expect((watch.rejoinError() as { type?: string }).type).toBe('FENCED_INSTANCE_ID');
  });

  it('other commit failures (a rebalance under way, a broker down) start nothing', () => {
    const clock = new ManualClock();
    const watch = new MembershipWatch(clock, 1_000);
    watch.commitFailed(refused('REBALANCE_IN_PROGRESS'));
    watch.commitFailed(new Error('Connection timeout'));
    clock.advance(60_000);
    expect(watch.rejoinError()).toBeUndefined();
  });
});
