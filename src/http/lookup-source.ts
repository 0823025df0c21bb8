import { AdjunctError } from '../errors';
import type { Lookup } from '../lookup';
import type { HttpServerOptions, LookupSource } from './types';

/** The options' Lookup as a source (a plain Lookup is always there). */
export function lookupSourceOf(o: Pick<HttpServerOptions, 'lookup'>): LookupSource {
  const l = o.lookup;
  return typeof l === 'function' ? l : () => l;
}

/**
 * The Lookup of a worker's HTTP API, opened once the worker has connected: until `set`, reads answer 503
 * WORKER_NOT_STARTED, so the API can listen (health, readiness, status, metrics) while the worker still waits for its
 * dependencies at start-up.
 */
export class DeferredLookup {
  private lookup?: Lookup;

  /** The source the read routes call. */
  readonly source: LookupSource = () => {
    if (this.lookup) return this.lookup;
    throw new AdjunctError('the worker is still starting (waiting for Cassandra or Kafka); reads are served once it runs', {
      code: 'WORKER_NOT_STARTED',
      stage: 'lookup',
    });
  };

  /** True once a Lookup is set. */
  get isSet(): boolean {
    return this.lookup !== undefined;
  }

  /** Makes `lookup` the one reads use. */
  set(lookup: Lookup): void {
    this.lookup = lookup;
  }

  /** Closes the Lookup, if one was set. */
  async close(): Promise<void> {
    const l = this.lookup;
    this.lookup = undefined;
    await l?.close();
  }
}
