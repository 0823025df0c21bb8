import { Consumer } from 'kafkajs';
import { AdjunctError, describeError } from '../errors';
import { Logger } from '../observability/logger';
import { fetchPartitionOffsets } from '../bootstrap/topic-offsets';
import { withKafkaTimeout } from '../kafka/kafka-retry';
import { confirmedCommit } from './confirmed-commit';
import { MembershipWatch } from './membership-watch';
import { ProgressWatchdog } from './progress-watchdog';
import { OffsetCommit } from './offset-committer';
import { PipelineParts, TaskTarget } from './pipeline-parts';
import { SinkTaskCore } from './sink-task-core';
import { PipelineState, PipelineStatus, TaskCounts } from './task-status';

export type { PipelineState, PartitionStatus, PipelineStatus } from './task-status';

/**
 * One pipeline generation's sink task on a kafkajs consumer: joins the group, feeds fetched batches to the sink
 * loop, commits durable offsets every commitInterval, on rebalance and on stop. Offsets are committed only up to the
 * first record that is not durable yet, with the writer's observed stream time as of that offset.
 */
export class PipelineTask {
  private readonly core: SinkTaskCore;
  private consumer?: Consumer;
  private commitOffsets?: (offsets: OffsetCommit) => Promise<void>;
  private commitTimer?: NodeJS.Timeout;
  private watchdog?: ProgressWatchdog;
  /** Commits refused to a membership the group dropped, while kafkajs does not re-join (kafkajs issue #1568). */
  private readonly membership: MembershipWatch;
  private readonly log: Logger;
  /** Paused by the operator (or started paused): kept here, because kafkajs forgets it when it restarts a crashed consumer. */
  private pauseWanted = false;
  /**
   * True from a group join (GROUP_JOIN) until kafkajs stops the consumer (STOP: a stop of ours, or a crash before kafkajs
   * restarts it): kafkajs's pause and resume throw while it has no consumer group. Before a join, `pauseWanted` waits
   * for the join, which comes before any fetch.
   */
  private running = false;
  /**
   * True while `consumer.run` joins the group. kafkajs cannot cancel a join: a consumer disconnected meanwhile finishes
   * it anyway, never sends LeaveGroup, and the member it registered holds up the group's next join (another worker's,
   * or this one's after a restart) until its session times out.
   */
  private joining = false;
  /** True once a stop has disconnected the consumer: what the start joined after that must be disconnected again. */
  private disconnectedByStop = false;

  constructor(parts: PipelineParts, target: TaskTarget) {
    // A FAILED task stops fetching (its batches would be refused and fetched again, without end, while it waits for an
    // operator's restart); its writes in flight still complete and commit.
    const failing: TaskTarget = {
      ...target,
      onFatal: (e) => {
        this.setConsumerPaused(true);
        target.onFatal(e);
      },
    };
    this.core = new SinkTaskCore(parts, failing, (offsets) => this.commitOffsets?.(offsets) ?? Promise.reject(notRunning()));
    this.log = parts.logger.child({ pipeline: parts.options.pipeline, generation: target.generation });
    // Longer than kafkajs's own re-join takes to end in a join: its heartbeats see a rebalance within a session timeout.
    this.membership = new MembershipWatch(parts.clock, parts.options.sessionTimeoutMs + parts.options.commitIntervalMs);
  }

  /** Pipeline name. */
  get name(): string {
    return this.core.parts.options.pipeline;
  }

  /** Current state (RUNNING reads STALLED while a dependency is down). */
  get state(): PipelineState {
    return this.core.lifecycle.state;
  }

  /** Record counts since start (a task restarted on new topics carries them over). */
  get counts(): TaskCounts {
    return this.core.counts;
  }

  /** The error that failed the task, if any. */
  get lastError(): AdjunctError | undefined {
    return this.core.lifecycle.lastError;
  }

  /**
   * Joins the group and starts consuming. A stop while it starts wins: the start goes no further than the step it was
   * in (no commit timer or watchdog started after the stop), and a consumer that kafkajs connected or joined after the
   * stop's disconnect is disconnected again.
   */
  async start(): Promise<void> {
    const o = this.core.parts.options;
    const lifecycle = this.core.lifecycle;
    // A reset position nobody judged fails the task here under policy fail: it never consumes past the gap.
    if (!(await this.core.takePositions()) || lifecycle.stopping) return;
    const consumer = this.createConsumer();
    await consumer.connect();
    // A group without committed offsets starts at the earliest one: a changelog is complete only from its beginning.
    if (!lifecycle.stopping) await consumer.subscribe({ topics: this.core.target.topics, fromBeginning: true });
    if (lifecycle.stopping) return this.disconnectAfterStop();
    lifecycle.set(this.pauseWanted ? 'PAUSED' : 'RUNNING');
    this.watchdog?.start(Math.min(30_000, Math.max(1_000, Math.round(o.watchdogTimeoutMs / 4))));
    this.commitTimer = setInterval(() => void this.periodicCommit(), o.commitIntervalMs);
    this.joining = true;
    try {
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: o.partitionsConsumedConcurrently,
        eachBatch: async (b) => {
          const { topic, partition } = b.batch;
          const rejoin = this.membership.rejoinError();
          if (rejoin !== undefined) {
            this.log.warn({ err: describeError(rejoin) }, 'commits refused to a membership the group dropped: re-joining the group');
            throw rejoin;
          }
          this.watchdog?.batchStarted(topic, partition);
          try {
            await this.core.loop.eachBatch(b);
          } finally {
            this.watchdog?.batchEnded(topic, partition, this.core.partitions.get(topic, partition)?.expectedNext ?? null);
          }
        },
      });
    } catch (e) {
      // A stop's disconnect during the group join can fail the join: that is the stop, not a failure.
      if (lifecycle.stopping) return this.disconnectAfterStop();
      throw e;
    } finally {
      this.joining = false;
    }
    if (lifecycle.stopping) return this.disconnectAfterStop();
    this.log.info({ topics: this.core.target.topics, groupId: this.core.target.groupId }, 'pipeline started');
  }

  /** The task stopped while it started: its consumer, connected or joined after the stop's disconnect, leaves too. */
  private async disconnectAfterStop(): Promise<void> {
    if (this.disconnectedByStop) await this.disconnect(this.core.parts.options.shutdownTimeoutMs);
  }

  private createConsumer(): Consumer {
    const o = this.core.parts.options;
    const consumer = this.core.parts.kafka.consumer({
      groupId: this.core.target.groupId,
      sessionTimeout: o.sessionTimeoutMs,
      heartbeatInterval: o.heartbeatIntervalMs,
      ...o.fetch,
      allowAutoTopicCreation: false,
      retry: { retries: 10 },
    });
    this.consumer = consumer;
    this.commitOffsets = confirmedCommit(consumer);
    this.watchdog = this.createWatchdog();
    consumer.on(consumer.events.FETCH, () => this.watchdog?.fetchCompleted());
    consumer.on(consumer.events.START_BATCH_PROCESS, (e) => {
      const { topic, partition, firstOffset, lastOffset, batchSize } = e.payload;
      this.watchdog?.fetched(topic, partition, lastOffset);
      // Transaction markers or aborted records only: kafkajs passes over them without calling eachBatch.
      if (batchSize === 0) this.core.loop.passedOver(topic, partition, firstOffset, lastOffset);
    });
    consumer.on(consumer.events.STOP, () => (this.running = false));
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      // A join that completed after the stop's disconnect (one kafkajs began before it, a restart after a crash
      // included) leaves again: nothing of this task may consume once it stopped.
      if (this.disconnectedByStop) {
        void this.disconnect(this.core.parts.options.shutdownTimeoutMs);
        return;
      }
      // Every join, the first and that of a consumer kafkajs restarted after a crash (a new group, nothing paused),
      // applies the pause before the consumer fetches.
      this.running = true;
      this.membership.joined();
      if (this.pauseWanted || this.core.lifecycle.failed) this.setConsumerPaused(true);
      this.watchdog?.assigned(e.payload.memberAssignment);
      this.core.partitions.retain(e.payload.memberAssignment);
      this.log.info({ assignment: e.payload.memberAssignment }, 'partitions assigned');
    });
    consumer.on(consumer.events.REBALANCING, () => {
      this.log.info('rebalance started: committing durable offsets');
      void this.commit().catch(() => undefined);
    });
    consumer.on(consumer.events.CRASH, (e) => {
      if (e.payload.restart) return this.log.warn({ err: describeError(e.payload.error) }, 'consumer crashed, kafkajs restarts it');
      this.fail(
        new AdjunctError(`consumer crashed: ${describeError(e.payload.error)}`, {
          code: 'CONSUMER_CRASH',
          stage: 'consume',
          cause: e.payload.error,
        }),
      );
    });
    return consumer;
  }

  /** The progress watchdog of this task's consumer (none when kafka.progressTimeout is 0). */
  private createWatchdog(): ProgressWatchdog | undefined {
    const { options: o, clock, admin, metrics } = this.core.parts;
    if (o.watchdogTimeoutMs <= 0) return undefined;
    const { groupId, topics } = this.core.target;
    return new ProgressWatchdog({
      clock,
      timeoutMs: o.watchdogTimeoutMs,
      // One attempt, bounded: an admin request that never answers must not stop the checks.
      offsets: () =>
        withKafkaTimeout(
          `the offsets of group ${groupId}`,
          fetchPartitionOffsets(admin, groupId, topics, { timeoutMs: 0 }),
          o.commitTimeoutMs,
        ),
      reading: () => this.core.lifecycle.state === 'RUNNING' && !this.core.parts.stall.failing,
      progress: () => {
        const c = this.core.counts;
        return c.consumed + c.written + c.skipped + c.deadLettered + c.expired;
      },
      log: this.log,
      onStuck: (stuck) => {
        metrics.consumerRestarts.inc({ pipeline: o.pipeline });
        this.log.warn(
          {
            groupId,
            timeoutMs: o.watchdogTimeoutMs,
            consumer: this.consumerStatus(),
            partitions: stuck.map((s) => ({
              topic: s.topic,
              partition: s.partition,
              position: s.position.toString(),
              highWatermark: s.highWatermark.toString(),
              idleMs: s.idleMs,
              reason: s.reason,
            })),
          },
          'consumer stuck: assigned partitions did not move (nothing read past the position, or a batch settling nothing); restarting the task from its committed offsets',
        );
        this.core.target.onStuck?.();
      },
      onBehindLogStart: (behind) => {
        for (const b of behind)
          void this.core
            .behindLogStart(b.topic, b.partition, b.logStart)
            .catch((e) =>
              this.log.warn(
                { topic: b.topic, partition: b.partition, err: describeError(e) },
                'offset-loss check failed; the next watchdog check or batch decides',
              ),
            );
      },
    });
  }

  /** Moves the task to FAILED (fatal error); offsets stay at the last durable record. */
  fail(err: AdjunctError): void {
    this.core.lifecycle.fail(err);
  }

  /** The commit of every commitInterval: a failure is retried at the next tick, and a refused membership is watched. */
  private async periodicCommit(): Promise<void> {
    const membership = this.membership.commitStarted();
    try {
      await this.commit();
      this.membership.committed();
    } catch (e) {
      this.log.warn({ err: describeError(e) }, 'commit failed; will retry');
      this.membership.commitFailed(e, membership);
    }
  }

  /** Commits, for every owned partition, the offset after the last durable record (persisting stream time first). */
  commit(): Promise<void> {
    return this.core.committer.commit();
  }

  /** Pauses fetching (admin route); before `start`, the task starts paused. It stays paused across kafkajs's consumer restarts. */
  pause(): void {
    this.pauseWanted = true;
    this.setConsumerPaused(true);
    if (this.core.lifecycle.state === 'RUNNING' || this.core.lifecycle.state === 'STALLED') this.core.lifecycle.set('PAUSED');
  }

  /** Resumes fetching (a FAILED task stays paused: it fetches again only once restarted). */
  resume(): void {
    this.pauseWanted = false;
    if (!this.core.lifecycle.failed) this.setConsumerPaused(false);
    if (this.core.lifecycle.state === 'PAUSED') this.core.lifecycle.set('RUNNING');
  }

  /** Pauses or resumes every source topic on the consumer while it has a group (otherwise the next join applies `pauseWanted`). */
  private setConsumerPaused(paused: boolean): void {
    if (!this.running || !this.consumer) return;
    const topics = this.core.target.topics.map((topic) => ({ topic }));
    if (paused) this.consumer.pause(topics);
    else this.consumer.resume(topics);
  }

  /** Stops fetching, waits for in-flight writes (bounded), commits, leaves the group. */
  async stop(timeoutMs: number): Promise<void> {
    const { lifecycle, partitions, parts } = this.core;
    if (lifecycle.state === 'STOPPED') return;
    lifecycle.stopping = true;
    lifecycle.set('STOPPING');
    // A check in flight asks the worker's admin: it ends before the stop does (and the worker closes the admin).
    const checkEnded = this.watchdog?.stop();
    if (this.commitTimer) clearInterval(this.commitTimer);
    this.setConsumerPaused(true);
    const deadline = parts.clock.now() + timeoutMs;
    // A consumer joining its group leaves it properly only once joined (`joining`); the join is bounded by the timeout.
    while (parts.clock.now() < deadline && this.joining) await parts.clock.sleep(50);
    while (parts.clock.now() < deadline && partitions.draining()) await parts.clock.sleep(50);
    await this.commit().catch((e) => this.log.warn({ err: describeError(e) }, 'final commit failed'));
    await checkEnded;
    this.disconnectedByStop = true;
    await this.disconnect(timeoutMs);
    await partitions.closeAll();
    lifecycle.set('STOPPED');
    this.log.info({ counts: this.core.counts }, 'pipeline stopped');
  }

  /**
   * Leaves the group and closes the consumer, bounded: a kafkajs consumer wedged after a broker failure (the reason the
   * watchdog restarts a task) may never finish stopping; it is then abandoned and the broker evicts it. The bound is
   * at least DISCONNECT_MIN_MS whatever the shutdown timeout: a healthy consumer first waits for its fetch in flight
   * (kafkajs's maxWaitTime, 5 s), and one abandoned while healthy would go on heartbeating after the task stopped.
   */
  private async disconnect(timeoutMs: number): Promise<void> {
    const consumer = this.consumer;
    if (!consumer) return;
    let abandoned = false;
    await withKafkaTimeout('the consumer disconnect', consumer.disconnect(), Math.max(DISCONNECT_MIN_MS, timeoutMs), {
      onExpired: () => (abandoned = true),
    }).catch(() => undefined);
    if (abandoned) this.log.warn({ timeoutMs }, 'the Kafka consumer did not disconnect in time: abandoned');
  }

  /** Status snapshot for /status and the CLI. */
  status(): PipelineStatus {
    const consumer = this.consumerStatus();
    return consumer ? { ...this.core.status(), consumer } : this.core.status();
  }

  /** The consumer's fetch activity as status shows it (none without a watchdog). */
  private consumerStatus(): PipelineStatus['consumer'] {
    const a = this.watchdog?.activity();
    if (!a) return undefined;
    return {
      fetches: a.fetches,
      lastFetchAt: a.lastFetchAt === null ? null : new Date(a.lastFetchAt).toISOString(),
      batchesInProgress: a.batchesInProgress,
    };
  }
}

/** The shortest wait for a consumer's disconnect before it is abandoned (longer than kafkajs's 5 s fetch wait). */
const DISCONNECT_MIN_MS = 15_000;

/** A commit before the task's consumer exists. */
function notRunning(): AdjunctError {
  return new AdjunctError('offset commit not sent: the task has no Kafka consumer yet', { code: 'KAFKA_UNAVAILABLE', stage: 'commit' });
}
