/**
 * Pure helpers of the dashboard (browser code, no DOM): number and date
 * formatting for people, the default date range, and the fallback's 404.
 */

/**
 * The first of the browser's languages that Intl takes, else `en`: a tag it refuses (`en-US@posix`, what headless
 * browsers report under LANG=C.UTF-8) threw a RangeError from the formatters and left the page blank.
 */
export function pickLocale(tags: readonly string[]): string {
  for (const tag of tags) {
    try {
      const [canonical] = Intl.getCanonicalLocales(tag);
      if (canonical && Intl.NumberFormat.supportedLocalesOf(canonical).length > 0 && Intl.DateTimeFormat.supportedLocalesOf(canonical).length > 0) return canonical;
    } catch {
      // Not a BCP 47 tag: the next one.
    }
  }
  return 'en';
}

/** The locale every number and date of the page is shown in. */
export const locale = pickLocale(typeof navigator === 'undefined' ? [] : [...(navigator.languages ?? []), navigator.language].filter(Boolean));

const integer = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
const percent = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 2 });
const dayFormat = new Intl.DateTimeFormat(locale, { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: 'UTC' });
const tickFormat = new Intl.DateTimeFormat(locale, { month: 'numeric', day: 'numeric', timeZone: 'UTC' });
const timeFormat = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });

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
export const formatTime = (iso: string | null): string => (iso ? timeFormat.format(new Date(iso)) : '–');

/** A day (YYYY-MM-DD, UTC) in the reader's locale (`30/10/2026` in en-GB, `30.10.2026` in de-DE). */
export const formatDay = (day: string): string => dayFormat.format(new Date(`${day}T00:00:00Z`));

/** A chart's day tick (seconds since the epoch, UTC) without the year (`30/10`, `30.10.`). */
export const formatTick = (seconds: number): string => tickFormat.format(new Date(seconds * 1000));
