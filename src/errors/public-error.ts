import { AdjunctError } from './adjunct-error';
import { ERROR_CODES, ErrorCode } from './error-codes';

/** What an error may show outside the process (HTTP replies, /status, DLQ headers): a stable code and adjunct's own words. */
export interface PublicError {
  code: ErrorCode;
  message: string;
}

/** Longest public message (the full detail stays in the logs). */
const MAX_PUBLIC_LENGTH = 500;

/**
 * The public form of an error: adjunct's own message with every wrapped cause's text (driver and client library
 * messages: hosts, addresses, inner errors) cut out, stack frames, file paths and addresses removed. A message made only
 * of a cause's text becomes the code's generic wording. Anything that is not an AdjunctError is an internal error.
 */
export function publicError(e: unknown, fallback: (code: ErrorCode) => string = genericMessage): PublicError {
  if (!(e instanceof AdjunctError)) return { code: 'INTERNAL', message: 'internal error' };
  let text = e.message;
  for (let cause: unknown = e.cause, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth++) {
    for (const inner of [`${cause.name}: ${cause.message}`, cause.message]) {
      const at = inner.length > 0 ? text.indexOf(inner) : -1;
      if (at >= 0) text = text.slice(0, at);
    }
  }
  text = scrubErrorText(text).replace(/[\s:;,(-]+$/, '');
  return { code: e.code, message: text.length > 0 ? text : fallback(e.code) };
}

/** publicError as one line: `CODE: message`. */
export function publicErrorText(e: unknown): string {
  const p = publicError(e);
  return `${p.code}: ${p.message}`;
}

/** Removes stack frames, source file paths and network addresses from a text, keeps its first line, caps its length. */
export function scrubErrorText(text: string): string {
  const firstLine = text.split(/\r?\n/)[0];
  const scrubbed = firstLine
    .replace(/\s+at\s+\S+\s+\(.*?:\d+:\d+\)/g, '')
    .replace(/(?:file:\/\/)?(?:\/[\w.@+-]+)+\.(?:[cm]?js|ts|node)(?::\d+){0,2}/g, '[path]')
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '[address]')
    .replace(/\[[0-9a-f:]+\](?::\d+)?/gi, '[address]')
    // Named hosts with a port (`cassandra:9042`, `kafka-1.internal:9092`, `localhost:8081`): the port makes it an address.
    .replace(/\b[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*:\d{2,5}\b/gi, '[address]')
    .trim();
  return scrubbed.length > MAX_PUBLIC_LENGTH ? `${scrubbed.slice(0, MAX_PUBLIC_LENGTH)}…` : scrubbed;
}

function genericMessage(code: ErrorCode): string {
  return `${ERROR_CODES[code].meaning} (details in the worker log)`;
}
