import { InvalidArgumentError } from '../errors';

/** Epoch milliseconds (a negative one too: Kafka's times are any `long`) or an ISO-8601 date or date-time. */
const EPOCH_MILLIS = /^-?\d{1,16}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** True when the date part (YYYY-MM-DD) names a real day: Date.parse rolls 2026-02-31 over to March 3rd. */
function isCalendarDate(v: string): boolean {
  const [y, m, d] = v.slice(0, 10).split('-').map(Number);
  return m >= 1 && m <= 12 && d >= 1 && d <= new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/**
 * Parses a time given as text (HTTP query parameters, CLI options): epoch milliseconds or an ISO-8601 date/date-time.
 * A date-time without an offset is UTC, whatever the server's time zone; InvalidArgumentError naming `name` otherwise.
 */
export function parseTimeText(name: string, v: string): number {
  if (EPOCH_MILLIS.test(v) && Number.isSafeInteger(Number(v))) return Number(v);
  const utc = v.length > 10 && !/(Z|[+-]\d{2}:?\d{2})$/.test(v) ? `${v.replace(' ', 'T')}Z` : v;
  const t = ISO_DATE_TIME.test(v) && isCalendarDate(v) ? Date.parse(utc) : Number.NaN;
  if (Number.isNaN(t))
    throw new InvalidArgumentError(
      `invalid ${name} ${JSON.stringify(v)}: use epoch milliseconds or an ISO-8601 date (e.g. 2026-01-31T12:00:00Z)`,
      {
        [name]: v,
      },
    );
  return t;
}
