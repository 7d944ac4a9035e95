import { InvalidEventRequestError } from './errors.js';
import { isCalendarDay, utcDay } from './days.js';
import { buildHours, planHours } from './hours.js';
import { mapLimit } from './map-limit.js';
import { dayHours, eventPaths } from './paths.js';
import type { EventStore } from './store.js';
import { eventNames, type EventName } from './types.js';

/**
 * Minutes after an hour ends before the hourly job builds it: records of its
 * last minutes may still be landing (the SES ingester batches for up to 2
 * minutes). Later arrivals make the hour out of date; the next request or
 * run rebuilds it.
 */
export const HOUR_SETTLE_MINUTES = 5;

/** Told the rows of each hour built (the statistics' counts, shared/stats/events-daily.ts). */
export type HoursCounted = (clientId: string, event: EventName, day: string, hours: Array<{ hour: string; events: number }>) => Promise<void>;

/** What the hourly job accepts: an EventBridge scheduled event (`time`), or `{date, clients?, force?}` by hand (every closed hour of that day). */
export interface HourlyRequest {
  time?: string;
  date?: string;
  clients?: string[];
  force?: boolean;
}

export interface HourlySummary {
  days: string[];
  /** Client, event and day whose hours were built. */
  built: Array<{ clientId: string; event: EventName; day: string; hours: string[]; rawObjectsRead: number }>;
  /** Days holding raw objects written before hours existed: assembled whole by the daily job, not by hours. */
  skipped: Array<{ clientId: string; event: EventName; day: string; reason: string }>;
  /** Client, event and day pairs checked. */
  checked: number;
}

/** The hours of `day` that ended at least HOUR_SETTLE_MINUTES before `at`. */
export function closedHours(day: string, at: number): string[] {
  return dayHours.filter((h) => Date.parse(`${day}T${h}:00:00.000Z`) + 3_600_000 + HOUR_SETTLE_MINUTES * 60_000 <= at);
}

/**
 * The hourly job: builds (or rebuilds, after late records) each closed hour of the open day, so a download of that day
 * only assembles the hours the job has not reached; with `date`, that day's. Checks run `concurrency` at a time, builds
 * one at a time so open object streams stay under the SDK's socket limit.
 */
export async function runHourlyAssembly(
  store: EventStore,
  request: HourlyRequest = {},
  now = new Date(),
  { concurrency = 8, onHours }: { concurrency?: number; onHours?: HoursCounted } = {},
): Promise<HourlySummary> {
  const at = request.time ? Date.parse(request.time) : now.getTime();
  if (Number.isNaN(at)) throw new InvalidEventRequestError('time', `time must be an ISO 8601 instant, got ${JSON.stringify(request.time)}`);
  let days: string[];
  if (request.date !== undefined) {
    if (typeof request.date !== 'string' || !isCalendarDay(request.date)) throw new InvalidEventRequestError('date', `date must be a day written YYYY-MM-DD, got ${JSON.stringify(request.date)}`);
    days = [request.date];
  } else {
    // The day before too while its last hour closed less than an hour ago.
    days = [...new Set([utcDay(at - 3_600_000 - HOUR_SETTLE_MINUTES * 60_000), utcDay(at)])];
  }
  const ids = request.clients ?? (await store.listChildren(eventPaths.clientsPrefix()));
  const work = days.flatMap((day) => ids.flatMap((clientId) => eventNames.map((event) => ({ clientId, event, day, hours: closedHours(day, at) })))).filter((w) => w.hours.length > 0);
  const plans = await mapLimit(work, concurrency, (w) => planHours(store, w.clientId, w.event, w.day, { variants: ['safe', 'raw'], hours: w.hours, force: request.force === true }));
  const summary: HourlySummary = { days, built: [], skipped: [], checked: work.length };
  const failed: string[] = [];
  for (const plan of plans) {
    const { clientId, event, day } = plan;
    if (plan.legacy.length > 0) {
      summary.skipped.push({ clientId, event, day, reason: `${plan.legacy.length} raw objects outside hour folders: the day is assembled whole` });
      continue;
    }
    if (plan.hours.length === 0 || (plan.hours.every((h) => h.missing.length === 0) && plan.superseded.length === 0)) continue;
    try {
      // The grace of replaced rows runs on the store's clock, not on the run's time.
      const result = await buildHours(store, plan, { now: now.getTime() });
      if (onHours && result.built.length > 0) await onHours(clientId, event, day, result.hours.filter((h) => result.built.includes(h.hour)));
      if (result.built.length > 0) summary.built.push({ clientId, event, day, hours: result.built, rawObjectsRead: result.rawObjectsRead });
    } catch (err) {
      // One client's bad object does not hold back the others' hours; the run still fails, naming it.
      failed.push(`${clientId}/${event}/${day}: ${(err as Error).message}`);
    }
  }
  if (failed.length > 0) throw new Error(`Hours of ${failed.length} file(s) not built (the others were): ${failed.join('; ')}`);
  return summary;
}
