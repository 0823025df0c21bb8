import { createHash, timingSafeEqual } from 'crypto';
import { isIP } from 'net';
import type { HttpSettings } from './types';

/** True when host binds only the loopback interface (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** Constant-time check of an `Authorization: Bearer <token>` header. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (typeof header !== 'string') return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return false;
  const a = createHash('sha256').update(m[1]).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** True when the admin routes are served: a token protects them, or the bind is loopback-only. */
export function adminRoutesEnabled(settings: Pick<HttpSettings, 'host' | 'adminToken'>): boolean {
  return Boolean(settings.adminToken) || isLoopbackHost(settings.host);
}
