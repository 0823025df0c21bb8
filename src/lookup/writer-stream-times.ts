import type { RawVersion } from '../store/cassandra';

/**
 * The persisted stream time of each writer of a table (writer = source topic/partition). A version's retention horizon
 * is the stream time of the writer that wrote it minus the history retention, as in a Kafka Streams task's store.
 */
export class WriterStreamTimes {
  /** Largest stream time over all writers, or -Infinity. */
  readonly max: number;

  constructor(readonly byWriter: ReadonlyMap<string, number>) {
    let max = Number.NEGATIVE_INFINITY;
    for (const t of byWriter.values()) max = Math.max(max, t);
    this.max = max;
  }

  /**
   * Stream time applying to a version: its writer's (-Infinity while that writer has persisted none yet). Rows written
   * before versions recorded their writer fall back to the maximum over all writers.
   */
  of(version: Pick<RawVersion, 'writer'> | null): number {
    const writer = version?.writer;
    if (writer === undefined || writer === null) return this.max;
    return this.byWriter.get(writer) ?? Number.NEGATIVE_INFINITY;
  }
}
