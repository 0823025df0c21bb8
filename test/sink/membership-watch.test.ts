import { ManualClock } from '../../src/clock';
import { MembershipWatch } from '../../src/sink/membership-watch';

/** A refusal as kafkajs gives it up: a non-retriable error wrapping the protocol error (its `type`). */
function refused(type: string): Error {
  return Object.assign(new Error('KafkaJSNonRetriableError'), { cause: Object.assign(new Error(`refused: ${type}`), { type }) });
}

/** A watch with a grace of `graceMs` on a manual clock; `refuse` fails a commit started now with `type`. */
function watchOf(graceMs: number) {
  const clock = new ManualClock();
  const watch = new MembershipWatch(clock, graceMs);
  const refuse = (type: string) => watch.commitFailed(refused(type), watch.commitStarted());
  const thrownType = () => (watch.rejoinError() as { type?: string } | undefined)?.type;
  return { clock, watch, refuse, thrownType };
}

describe('MembershipWatch', () => {
  it('asks for a re-join only once refusals of the membership have lasted the grace, then again after another grace', () => {
    const { clock, refuse, thrownType } = watchOf(10_000);
    refuse('UNKNOWN_MEMBER_ID');
    clock.advance(9_999);
    refuse('UNKNOWN_MEMBER_ID');
    expect(thrownType()).toBeUndefined();
    clock.advance(1);
    expect(thrownType()).toBe('UNKNOWN_MEMBER_ID');
    // Handed out once: the batch after it does not throw again until another grace of refusals.
    expect(thrownType()).toBeUndefined();
    clock.advance(10_000);
    expect(thrownType()).toBe('UNKNOWN_MEMBER_ID');
  });

  it('a commit that goes through, or a join, ends the watch', () => {
    const { clock, watch, refuse, thrownType } = watchOf(1_000);
    refuse('ILLEGAL_GENERATION');
    watch.committed();
    clock.advance(5_000);
    expect(thrownType()).toBeUndefined();
    refuse('ILLEGAL_GENERATION');
    watch.joined();
    clock.advance(5_000);
    expect(thrownType()).toBeUndefined();
    refuse('ILLEGAL_GENERATION');
    clock.advance(1_000);
    expect(thrownType()).toBe('ILLEGAL_GENERATION');
  });

  it('a refusal of a commit sent before the latest join starts nothing (it is about the membership that join replaced)', () => {
    const { clock, watch, thrownType } = watchOf(1_000);
    const sentBefore = watch.commitStarted();
    watch.joined();
    watch.commitFailed(refused('ILLEGAL_GENERATION'), sentBefore);
    clock.advance(60_000);
    expect(thrownType()).toBeUndefined();
  });

  it('other commit failures (a rebalance under way, a broker down, a fenced instance kafkajs would crash on) start nothing', () => {
    const { clock, watch, refuse, thrownType } = watchOf(1_000);
    refuse('REBALANCE_IN_PROGRESS');
    refuse('FENCED_INSTANCE_ID');
    watch.commitFailed(new Error('Connection timeout'), watch.commitStarted());
    clock.advance(60_000);
    expect(thrownType()).toBeUndefined();
  });
});
