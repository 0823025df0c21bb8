/** The demo's data: a currency-rates changelog and a transactions stream (the KIP-889 stream-table join example). */

/** Base time of the demo: the start of the minute ten minutes ago (brokers reject record times in the future). */
export function demoBaseTime(now = Date.now()): number {
  return Math.floor(now / 60_000) * 60_000 - 600_000;
}

/** One rate change (value null = the rate was deleted upstream). */
export interface RateChange {
  currency: string;
  rate: number | null;
  at: number;
  note: string;
}

/** One transaction of the stream. */
export interface Transaction {
  id: string;
  currency: string;
  amount: number;
  at: number;
  note: string;
}

/** Rates in log order: note the out-of-order EUR change and the deleted GBP rate. */
export function rateChanges(t0: number): RateChange[] {
  return [
    { currency: 'EUR', rate: 1.08, at: t0, note: 'b0' },
    { currency: 'GBP', rate: 1.27, at: t0, note: '' },
    { currency: 'JPY', rate: 0.0067, at: t0, note: '' },
    { currency: 'EUR', rate: 1.11, at: t0 + 3000, note: 'b3' },
    { currency: 'EUR', rate: 1.09, at: t0 + 2500, note: 'arrives late, valid from t0+2.5s' },
    { currency: 'GBP', rate: null, at: t0 + 4000, note: 'GBP rate withdrawn' },
  ];
}

/** Transactions in log order: a2 arrives after a4 but happened at 10:00:02. */
export function transactions(t0: number): Transaction[] {
  return [
    { id: 'a1', currency: 'EUR', amount: 100, at: t0 + 1000, note: '' },
    { id: 'a4', currency: 'EUR', amount: 250, at: t0 + 4000, note: '' },
    { id: 'a2', currency: 'EUR', amount: 75, at: t0 + 2000, note: 'late: must join b0, not b3' },
    { id: 'a6', currency: 'EUR', amount: 10, at: t0 + 2600, note: 'joins the late-arriving rate' },
    { id: 'g1', currency: 'GBP', amount: 40, at: t0 + 3500, note: '' },
    { id: 'g2', currency: 'GBP', amount: 40, at: t0 + 5000, note: 'after the rate was withdrawn' },
    { id: 'y1', currency: 'JPY', amount: 9000, at: t0 + 1500, note: '' },
  ];
}

/** Formats epoch ms as HH:MM:SS.mmm (UTC). */
export function hhmmss(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
