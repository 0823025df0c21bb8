/** Shared result shape of benchmark phases. */
import { LatencySummary } from '../stats';

/** Outcome of one timed phase. */
export interface PhaseResult {
  phase: string;
  /** Records (or lookups) processed in the timed window. */
  count: number;
  unit: 'records' | 'lookups';
  seconds: number;
  ratePerSec: number;
  latency?: LatencySummary;
  /** Anything else worth recording (wall time incl. start-up, statement counts, ...). */
  extra?: Record<string, unknown>;
}
