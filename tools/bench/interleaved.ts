/**
 * Interleaved rounds: several kinds of request measured side by side on one server, each kind cut into slices and the
 * kinds' order rotated every slice, so a drift of the server during the round (a JIT or cache still warming) falls on
 * every kind alike. The bench's lookup phases and the issue #13 probes both time their lookups this way.
 */
import { runPool } from './pool';
import { ServerCpuTally } from './server-cpu';
import { cpuMicrosSince, LatencyRecorder, msSince } from './stats';

/** One kind of request of an interleaved round. */
export interface RequestKind {
  name: string;
  fn: (i: number) => Promise<void>;
}

/** What one kind's slices of a round added up to. */
export interface KindTally {
  ms: number;
  cpuMicros: number;
  lat: LatencyRecorder;
  /** Cassandra's and Kafka's CPU over the kind's slices (timed rounds only). */
  server?: ServerCpuTally;
  slices: number;
}

/**
 * One round of `count` requests of every kind, cut into slices of count / (2 × kinds) lookups and run kind after kind,
 * the kinds' order rotated every slice (each kind runs in every position equally often). Timed (with `stackDir`, also
 * the servers' CPU) per kind over its slices.
 */
export async function interleavedRound(
  kinds: readonly RequestKind[],
  count: number,
  concurrency: number,
  round: number,
  stackDir?: string,
): Promise<Map<string, KindTally>> {
  const slices = Math.max(1, Math.min(2 * kinds.length, count));
  const tallies = new Map<string, KindTally>(
    kinds.map((k) => [
      k.name,
      {
        ms: 0,
        cpuMicros: 0,
        lat: new LatencyRecorder(count),
        server: stackDir === undefined ? undefined : new ServerCpuTally(stackDir),
        slices,
      },
    ]),
  );
  for (let s = 0; s < slices; s++) {
    const from = Math.floor((s * count) / slices);
    const to = Math.floor(((s + 1) * count) / slices);
    for (let j = 0; j < kinds.length; j++) {
      const { name, fn } = kinds[(j + s + round) % kinds.length];
      const t = tallies.get(name)!;
      t.server?.open();
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await runPool(to - from, concurrency, (i) => fn(from + i), t.lat);
      t.ms += msSince(t0);
      t.cpuMicros += cpuMicrosSince(cpu0);
      t.server?.close();
    }
  }
  return tallies;
}
