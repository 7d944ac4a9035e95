import * as v from 'valibot';
import { isCalendarDay } from '../events/days.js';

/** Longest range a statistics request may ask for, in days (both ends included). */
export const MAX_RANGE_DAYS = 366;

const DAY_MS = 86_400_000;

const Day = (name: string, what: string) =>
  v.pipe(
    v.string(`${name} is required: a day written YYYY-MM-DD (UTC)`),
    v.regex(/^\d{4}-\d{2}-\d{2}$/, `${name} must be a day written YYYY-MM-DD (UTC)`),
    v.check(isCalendarDay, `${name} is not a calendar day`),
    v.description(what),
    // Documented as a calendar day (format date), not only its shape: `0000-00-00` is refused.
    v.metadata({ openapi: { ...DAY_DOC, description: what } }),
  );

/** A UTC calendar day as the API document describes it. */
export const DAY_DOC = { type: 'string', format: 'date', pattern: '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' };

/** How many days `from`..`to` holds, both included. */
export const rangeDays = (from: string, to: string): number => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;

/** Days from `from` to `to`, both included (YYYY-MM-DD, UTC). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/**
 * `from` and `to` of every statistics route: UTC days, both included, `from`
 * not after `to`, at most MAX_RANGE_DAYS days.
 */
export const dateRangeEntries = {
  from: Day('from', 'First day (UTC, YYYY-MM-DD), included'),
  to: Day('to', `Last day (UTC, YYYY-MM-DD), included; at most ${MAX_RANGE_DAYS} days after \`from\` counted inclusively`),
};

/** Checks of a query holding `from` and `to` (apply with `v.pipe(v.object({...dateRangeEntries, ...}), ...dateRangeChecks)`). */
export const dateRangeChecks = [
  v.check((q: { from: string; to: string }) => q.from <= q.to, 'from must not be after to'),
  v.check((q: { from: string; to: string }) => rangeDays(q.from, q.to) <= MAX_RANGE_DAYS, `from and to must be at most ${MAX_RANGE_DAYS} days apart (both included)`),
] as const;

/** The query of a statistics route with only a date range. */
export const DateRangeQuerySchema = v.pipe(v.object(dateRangeEntries), ...dateRangeChecks);
export type DateRange = v.InferOutput<typeof DateRangeQuerySchema>;
