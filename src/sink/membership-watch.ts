import { Clock } from '../clock';
import { kafkaErrorChain } from '../kafka/kafka-retry';

/** kafkajs error types of a commit refused because this member is not in the group's current generation. */
const MEMBERSHIP_LOST = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'FENCED_INSTANCE_ID']);

/**
 * Watches for a group membership that is gone while kafkajs does not re-join. kafkajs re-joins when a heartbeat or a
 * batch fails with a rebalance or an unknown member; but in 2.2.4 (its issue #1568) a join that fails with another
 * error (a broker outage) leaves its member id unset, its heartbeats then check nothing, and its consumer keeps
 * fetching under a membership the group dropped: every commit is refused, and nothing ever re-joins.
 *
 * States: *current* (the last commit went through, or the group was just joined) → *refused since T* (periodic commits
 * refused with UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or FENCED_INSTANCE_ID) → once refusals have lasted `graceMs`
 * (longer than a rebalance in which kafkajs itself is re-joining takes to end with a join), the next batch throws the
 * refusal to kafkajs, which re-joins on it (an unknown member drops its member id first) → current again at the join (asked for again after another graceMs of refusals).
 * Partition states are not fenced: a re-join keeps those assigned back, with their expected offsets, as a rebalance does.
 */
export class MembershipWatch {
  private refusedSince: number | undefined;
  private refusal: Error | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
  ) {}

  /** A periodic commit went through, or the group was joined (kafkajs GROUP_JOIN): the membership is current. */
  current(): void {
    this.refusedSince = undefined;
    this.refusal = undefined;
  }

  /** A periodic commit failed: a refusal of this membership starts (or continues) the count; other failures change nothing. */
  commitFailed(e: unknown): void {
    const refusal = kafkaErrorChain(e).find((x) => MEMBERSHIP_LOST.has(String((x as { type?: unknown }).type)));
    if (refusal === undefined) return;
    this.refusedSince ??= this.clock.now();
    this.refusal = refusal;
  }

  /**
   * The error the next batch throws to make kafkajs re-join, once refusals have lasted graceMs; handed out once per
   * graceMs while they go on (a re-join that did not happen is asked for again).
   */
  rejoinError(): Error | undefined {
    const since = this.refusedSince;
    if (since === undefined || this.clock.now() - since < this.graceMs) return undefined;
    this.refusedSince = this.clock.now();
    return this.refusal;
  }
}
