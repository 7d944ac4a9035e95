/** UTC day helpers for event files (`YYYY-MM-DD`). */

/**
 * Minutes after midnight UTC during which the previous day is still treated
 * as open: writes that started before midnight may still be landing. The
 * daily job runs after this (00:15 UTC).
 */
export const SETTLE_MINUTES = 10;

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day of an instant. */
export function utcDay(at: Date | number | string): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** True for a real calendar day written `YYYY-MM-DD` (rejects 2026-02-30). */
export function isCalendarDay(value: string): boolean {
  const m = DAY.exec(value);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.toISOString().slice(0, 10) === value;
}

/** The day `n` days before `day` (negative n: after). */
export function daysBefore(day: string, n: number): string {
  const date = new Date(`${day}T00:00:00.000Z`);
  date.setUTCDate(date.getUTCDate() - n);
  return utcDay(date);
}

/** `2026-11-21T18:04:05.123Z` → `2026-11-21 18:04:05` (spec 2.9), in UTC. */
export function csvDate(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) throw new Error(`Not a date: ${iso}`);
  return date.toISOString().slice(0, 19).replace('T', ' ');
}
