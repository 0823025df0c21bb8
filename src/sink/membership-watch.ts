import { Clock } from '../clock';
import { kafkaErrorOfType } from '../kafka/kafka-retry';

/**
 * kafkajs error types of a commit refused because this member is not in the group's current generation, on which
 * kafkajs re-joins when a batch throws them (an unknown member drops its member id first; ILLEGAL_GENERATION counts as
 * a rebalance). Not FENCED_INSTANCE_ID: kafkajs crashes its consumer on it (and never sends a group instance id).
 */
const MEMBERSHIP_LOST = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION']);

/**
 * Watches for a group membership that is gone while kafkajs does not re-join. kafkajs re-joins when a heartbeat or a
 * batch fails with a rebalance or an unknown member; but in 2.2.4 (its issue #1568) a join that fails with another
 * error (a broker outage) leaves its member id unset, its heartbeats then check nothing, and its consumer keeps
 * fetching under a membership the group dropped: every commit is refused, and nothing ever re-joins.
 *
 * States: *current* (the last commit went through, or the group was just joined) → *refused since T* (periodic commits
 * started since the last join refused with UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION) → once refusals have lasted
 * `graceMs` (longer than a rebalance in which kafkajs itself is re-joining takes to end with a join), the next batch
 * throws the refusal to kafkajs, which re-joins on it → current again at the join (asked for again after another
 * graceMs of refusals). Partition states are not fenced: a re-join keeps those assigned back, with their expected
 * offsets, as a rebalance does.
 */
export class MembershipWatch {
  private refusedSince: number | undefined;
  private refusal: Error | undefined;
  /** Joins so far: a refusal of a commit started before the latest join is about the membership that join replaced. */
  private joins = 0;

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
  ) {}

  /** The group was joined (kafkajs GROUP_JOIN): the membership is current. */
  joined(): void {
    this.joins++;
    this.committed();
  }

  /** A periodic commit went through: the membership is current. */
  committed(): void {
    this.refusedSince = undefined;
    this.refusal = undefined;
  }

  /** What a periodic commit passes back to commitFailed: the membership it was sent under. */
  commitStarted(): number {
    return this.joins;
  }

  /**
   * A periodic commit failed: a refusal of the membership it was sent under, when that is still the current one, starts
   * (or continues) the count; other failures change nothing.
   */
  commitFailed(e: unknown, startedAt: number): void {
    const refusal = kafkaErrorOfType(e, MEMBERSHIP_LOST);
    if (refusal === undefined || startedAt !== this.joins) return;
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
