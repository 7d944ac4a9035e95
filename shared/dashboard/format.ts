/**
 * Pure helpers of the dashboard (browser code, no DOM): number and date
 * formatting for people, the default date range, and the fallback's 404.
 */

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 2 });

/** A count as people read it in their locale (`12,345`). */
export const formatCount = (n: number): string => integer.format(n);

/** A ratio (0.0123) as a percentage (`1.23%`); `–` when there is none (no impressions). */
export const formatRatio = (r: number | null | undefined): string => (typeof r === 'number' && Number.isFinite(r) ? percent.format(r) : '–');

/** A day (YYYY-MM-DD, UTC) of a Date. */
export const dayOf = (d: Date): string => d.toISOString().slice(0, 10);

/** The default range: the last 30 days, today (UTC) included. */
export function defaultRange(now = new Date()): { from: string; to: string } {
  return { from: dayOf(new Date(now.getTime() - 29 * 86_400_000)), to: dayOf(now) };
}

/** Seconds since the epoch of a day's start (UTC): uPlot's time axis. */
export const daySeconds = (day: string): number => Date.parse(`${day}T00:00:00Z`) / 1000;

/**
 * The `$default` fallback's 404 (`No route for GET /v1/…`): the route is not
 * deployed yet. Any other 404 (an unknown list) is an answer of the route.
 */
export const isMissingRoute = (status: number, cause: unknown): boolean => status === 404 && typeof cause === 'string' && cause.startsWith('No route for ');

/** When a timestamp was, in the reader's locale. */
export const formatTime = (iso: string | null): string => (iso ? new Date(iso).toLocaleString() : '–');
