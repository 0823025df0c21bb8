import { Admin } from 'kafkajs';
import type { PipelineSpec } from '../config/schema';
import { topicMatcher } from '../config/topic-matcher';
import { SingleFlight } from '../concurrency';
import { describeError } from '../errors';
import { Logger } from '../observability/logger';

/** A change of the matched topic set. */
export interface TopicChange {
  topics: string[];
  added: string[];
  removed: string[];
}

/**
 * The topics a pipeline consumes: its literal `topics`, or the topics matching its `topicPattern`. kafkajs resolves a
 * RegExp subscription only once, at subscribe time; Kafka Connect's `topics.regex` picks up new topics through
 * metadata refreshes. This re-lists the topics every `topicRefreshInterval` and reports when the matched set changes.
 */
export class TopicSubscription {
  private current: string[] = [];
  /** Literal topics the last refresh did not find in the cluster (deleted under the pipeline). */
  private absent: string[] = [];
  private timer?: NodeJS.Timeout;
  /** The refresh in flight, shared by every caller until it ends (a tick during a slow refresh starts no second one). */
  private readonly refreshing = new SingleFlight<void>();
  private readonly matches?: (topic: string) => boolean;

  constructor(
    private readonly spec: Pick<PipelineSpec, 'topics' | 'topicPattern' | 'topicRefreshInterval'>,
    private readonly admin: Admin,
    private readonly log: Logger,
    /** Told the number of missing literal topics after each refresh (the `adjunct_source_topics_missing` gauge). */
    private readonly onMissing: (count: number) => void = () => undefined,
  ) {
    if (spec.topicPattern) this.matches = topicMatcher(spec.topicPattern);
    else this.current = [...(spec.topics ?? [])];
  }

  /** The topics resolved last (sorted for patterns, config order for literal lists). */
  get topics(): string[] {
    return [...this.current];
  }

  /** Literal topics missing from the cluster at the last refresh: consumed again (from the policy's offsets) once re-created. */
  get missing(): string[] {
    return [...this.absent];
  }

  /** True when the topics come from a pattern and can change while running. */
  get dynamic(): boolean {
    return this.matches !== undefined;
  }

  /** Lists the cluster's topics and returns the matched set (the literal list unchanged for `topics`). */
  async resolve(): Promise<string[]> {
    if (!this.matches) return this.topics;
    this.current = await this.matching();
    this.log.info({ topicPattern: this.spec.topicPattern, topics: this.current }, 'topic pattern matched');
    return this.topics;
  }

  /**
   * Re-lists topics every refresh interval: a pattern's matched set changing awaits `onChange` (one refresh at a time);
   * a literal topic deleted under the pipeline is logged (`SOURCE TOPIC MISSING`) and shown in `missing`.
   */
  watch(onChange: (change: TopicChange) => Promise<void>): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.refresh(onChange).catch((e) => this.log.error({ err: describeError(e) }, 're-subscribing failed'));
    }, this.spec.topicRefreshInterval);
  }

  /**
   * Stops watching; resolves when the refresh in flight, if any, has ended (its admin request done), so the worker
   * closes its admin only after it: a request of kafkajs's closed admin would connect it again.
   */
  stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return this.refreshing.settled();
  }

  /**
   * One refresh: lists topics and, when the matched set changed, awaits `onChange` (listing failures are logged and
   * retried). A call while a refresh is in flight returns that refresh.
   */
  refresh(onChange: (change: TopicChange) => Promise<void>): Promise<void> {
    return this.refreshing.run(() => this.refreshOnce(onChange));
  }

  private async refreshOnce(onChange: (change: TopicChange) => Promise<void>): Promise<void> {
    if (!this.matches) return this.checkLiteral();
    let next: string[];
    try {
      next = await this.matching();
    } catch (e) {
      this.log.warn(
        { topicPattern: this.spec.topicPattern, err: describeError(e) },
        'topic pattern refresh failed; retrying at the next interval',
      );
      return;
    }
    const added = next.filter((t) => !this.current.includes(t));
    const removed = this.current.filter((t) => !next.includes(t));
    if (!added.length && !removed.length) return;
    this.log.info({ topicPattern: this.spec.topicPattern, added, removed }, 'topic pattern: matched topics changed, re-subscribing');
    this.current = next;
    await onChange({ topics: next, added, removed });
  }

  /**
   * Literal topics: kafkajs keeps fetching a deleted topic and logs each failed fetch ("does not host this
   * topic-partition"), which never says the topic is gone. Each disappearance and return is logged once here.
   */
  private async checkLiteral(): Promise<void> {
    let listed: Set<string>;
    try {
      listed = new Set(await this.admin.listTopics());
    } catch {
      return; // Kafka unavailable: the consumer's own failures show it; checked again at the next interval
    }
    const absent = this.current.filter((t) => !listed.has(t));
    const gone = absent.filter((t) => !this.absent.includes(t));
    const back = this.absent.filter((t) => !absent.includes(t));
    this.absent = absent;
    this.onMissing(absent.length);
    if (gone.length)
      this.log.error(
        { topics: gone },
        'SOURCE TOPIC MISSING: a topic of the pipeline no longer exists (deleted?); nothing is consumed from it, the store keeps what it has; a re-created topic is read again under onOffsetOutOfRange',
      );
    if (back.length) this.log.warn({ topics: back }, 'source topic exists again: consuming it');
  }

  private async matching(): Promise<string[]> {
    return (await this.admin.listTopics()).filter(this.matches!).sort();
  }
}
