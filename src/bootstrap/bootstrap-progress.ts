import { topicPartitionKey } from '../kafka/topic-partition';
import type { PartitionOffsets } from './topic-offsets';

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
/** Number of offsets from `from` up to `to`, 0 when `to` is not past `from`. */
const span = (from: bigint, to: bigint) => (to > from ? to - from : 0n);

/** Where a group starts on a partition: its committed offset, else (none, or deleted by retention) the log start. */
const startOf = (p: PartitionOffsets): bigint => (p.committed !== null && p.committed > p.low ? p.committed : p.low);

/** A snapshot of bootstrap progress. */
export interface BootstrapProgress {
  /**
   * BOOTSTRAPPING: the generation's first bootstrap is running. CATCHING_UP: the generation was READY before, and this
   * worker (started, or rolled back to it) reads it up to the end offsets seen then. READY: caught up.
   */
  state: 'BOOTSTRAPPING' | 'CATCHING_UP' | 'READY';
  done: number;
  total: number;
  ratePerSec: number;
  etaSeconds: number | null;
}

/** The offsets a bootstrap runs toward, per `topic:partition`: captured end offsets and where the group started. */
export interface BootstrapTarget {
  end: Map<string, bigint>;
  start: Map<string, bigint>;
}

/** How far a group got toward its target. */
export interface BootstrapMeasure {
  done: bigint;
  total: bigint;
  /** Every partition's committed offset reached its captured end offset (or the log start, past records deleted by retention). */
  reached: boolean;
  /** Committed position per `topic:partition`. */
  positions: Record<string, string>;
}

/** A target as an earlier attempt of the same generation persisted it (offsets as decimal strings). */
export interface PersistedTarget {
  end: Record<string, string>;
  start: Record<string, string>;
}

/**
 * Captures the end offsets a bootstrap runs toward (Samza semantics: records arriving later do not move the target)
 * and where the group starts from. An earlier attempt of the same generation (a restart, or another worker of the
 * group) persisted both: they are reused, so every attempt and every worker measures the same total.
 */
export function captureTarget(parts: PartitionOffsets[], persisted?: PersistedTarget): BootstrapTarget {
  const target: BootstrapTarget = { end: new Map(), start: new Map() };
  for (const p of parts) {
    const id = topicPartitionKey(p.topic, p.partition);
    const end = persisted?.end[id];
    const start = persisted?.start[id];
    target.end.set(id, end !== undefined ? BigInt(end) : p.high);
    target.start.set(id, start !== undefined ? BigInt(start) : startOf(p));
  }
  return target;
}

/**
 * Captures the target of partitions first seen after the bootstrap began (partitions added to a topic, a topic newly
 * matched): their end offset as of now, so it does not move with every later measure while records keep arriving.
 * Returns the partitions added (persisted with the target's next write).
 */
export function captureNewPartitions(target: BootstrapTarget, parts: PartitionOffsets[]): string[] {
  const added: string[] = [];
  for (const p of parts) {
    const id = topicPartitionKey(p.topic, p.partition);
    if (target.end.has(id)) continue;
    target.end.set(id, p.high);
    target.start.set(id, startOf(p));
    added.push(id);
  }
  return added;
}

/** Measures a group's committed offsets against its target. */
export function measureProgress(parts: PartitionOffsets[], target: BootstrapTarget): BootstrapMeasure {
  let done = 0n;
  let total = 0n;
  let reached = true;
  const positions: Record<string, string> = {};
  for (const p of parts) {
    const id = topicPartitionKey(p.topic, p.partition);
    const end = target.end.get(id) ?? p.high;
    const start = target.start.get(id) ?? p.low;
    const pos = p.committed ?? start;
    total += span(start, end);
    done += span(start, min(pos, end));
    positions[id] = pos.toString();
    if (pos < max(end, p.low)) reached = false; // records deleted by retention count as reached
  }
  return { done, total, reached, positions };
}

const persisted = (offsets: Map<string, bigint>): Record<string, string> =>
  Object.fromEntries([...offsets].map(([k, v]) => [k, v.toString()]));

/** The target's end offsets in their persisted form. */
export function persistedEnd(target: BootstrapTarget): Record<string, string> {
  return persisted(target.end);
}

/** The target's start offsets in their persisted form. */
export function persistedStart(target: BootstrapTarget): Record<string, string> {
  return persisted(target.start);
}
