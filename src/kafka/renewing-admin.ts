import type { Admin } from 'kafkajs';
import { AdjunctError, describeError } from '../errors';
import { Logger } from '../observability/logger';
import { kafkaErrorOfType } from './kafka-retry';

const UNKNOWN_TOPIC = new Set(['UNKNOWN_TOPIC_OR_PARTITION']);

/** The least time between two renewals (a call that names a missing topic itself fails again on the new admin). */
export const ADMIN_RENEWAL_MIN_INTERVAL_MS = 10_000;

/** Admin members that are not requests: passed through to the current admin, never retried. */
const NOT_REQUESTS = new Set<PropertyKey>(['connect', 'disconnect', 'on', 'logger', 'events']);

/** True when the failure (or one it wraps) is Kafka's UNKNOWN_TOPIC_OR_PARTITION. */
export function isUnknownTopic(e: unknown): boolean {
  return kafkaErrorOfType(e, UNKNOWN_TOPIC) !== undefined;
}

/** How a renewing admin makes and connects its successors. */
export interface RenewingAdminParts {
  /** A new, unconnected kafkajs admin of the same client settings. */
  create: () => Admin;
  /** Connects an admin (and loads its broker list). */
  connect: (admin: Admin) => Promise<void>;
  log: Logger;
  now?: () => number;
}

/**
 * An Admin that starts over on a fresh kafkajs admin when a request fails with UNKNOWN_TOPIC_OR_PARTITION. kafkajs's
 * admin remembers every topic a request named (its cluster's target topics) and refreshes the metadata of all of them
 * before later requests, so once one of them is deleted every later request fails, whatever it asks. The failed
 * request is sent once more on the new admin; one that names the missing topic itself fails there too, and that error
 * is returned. Renewals are at least ADMIN_RENEWAL_MIN_INTERVAL_MS apart; concurrent failures share one renewal.
 * `disconnect` closes the current admin and one a renewal in flight connects; no request or renewal starts after it.
 * An admin closed (replaced, or by `disconnect`) while requests were in flight on it is closed again once the last of
 * them settles: kafkajs retries a request whose connection closed by connecting again.
 */
export function renewingAdmin(first: Admin, p: RenewingAdminParts): Admin {
  const now = p.now ?? Date.now;
  let current = first;
  let lastRenewal = -Infinity;
  let renewing: Promise<Admin> | undefined;
  let closed = false;
  /** Requests in flight per admin. kafkajs retries a request whose connection closed by connecting again. */
  const inFlight = new Map<Admin, number>();
  /** Admins closed (replaced, or by `disconnect`): closed again once their last request in flight settles (weak: kept no longer than used). */
  const retired = new WeakSet<Admin>();

  const close = (admin: Admin): Promise<void> => {
    retired.add(admin);
    return admin.disconnect();
  };

  /** One request on `admin`, counted while in flight; a closed admin is closed again after its last one. */
  const send = async (admin: Admin, prop: PropertyKey, args: unknown[]): Promise<unknown> => {
    inFlight.set(admin, (inFlight.get(admin) ?? 0) + 1);
    try {
      return await (admin as unknown as Record<PropertyKey, (...a: unknown[]) => Promise<unknown>>)[prop](...args);
    } finally {
      const left = inFlight.get(admin)! - 1;
      if (left > 0) inFlight.set(admin, left);
      else {
        inFlight.delete(admin);
        if (retired.has(admin)) void admin.disconnect().catch(() => undefined);
      }
    }
  };

  const renew = (failed: Admin, why: unknown): Promise<Admin> | undefined => {
    if (closed) return undefined;
    if (current !== failed) return Promise.resolve(current);
    if (renewing) return renewing;
    if (now() - lastRenewal < ADMIN_RENEWAL_MIN_INTERVAL_MS) return undefined;
    lastRenewal = now();
    p.log.warn(
      { err: describeError(why) },
      'Kafka admin: a request met a topic that no longer exists; reconnecting a fresh admin (kafkajs keeps refreshing every topic it was asked about)',
    );
    renewing = (async () => {
      const next = p.create();
      await p.connect(next);
      current = next;
      void close(failed).catch(() => undefined);
      return next;
    })().finally(() => (renewing = undefined));
    return renewing;
  };

  /** Closes the admin in use and, once it is connected, the one a renewal in flight is bringing up. */
  const disconnect = async (): Promise<void> => {
    closed = true;
    const pending = renewing;
    await close(current);
    const next = await pending?.catch(() => undefined);
    if (next) await close(next);
  };

  return new Proxy(first, {
    get(_target, prop) {
      const admin = current;
      if (prop === 'disconnect') return disconnect;
      const member = (admin as unknown as Record<PropertyKey, unknown>)[prop];
      if (typeof member !== 'function') return member;
      if (NOT_REQUESTS.has(prop)) return (member as (...a: unknown[]) => unknown).bind(admin);
      return async (...args: unknown[]) => {
        // kafkajs would connect a closed admin again for it, and nothing would close that connection.
        if (closed)
          throw new AdjunctError(`the Kafka admin is closed: ${String(prop)} not sent`, { code: 'KAFKA_UNAVAILABLE', retriable: false });
        try {
          return await send(admin, prop, args);
        } catch (e) {
          const next = isUnknownTopic(e) ? renew(admin, e) : undefined;
          if (!next) throw e;
          const fresh = await next;
          if (closed) throw e; // closed during the renewal: a request would connect the closed admin again
          return send(fresh, prop, args);
        }
      };
    },
  });
}
