import { Readable } from 'node:stream';
import { InvalidEventRequestError } from './errors.js';
import { assembleDay, type AssembleResult } from './assemble.js';
import { daysBefore, isCalendarDay, utcDay } from './days.js';
import type { EventStore } from './store.js';

/** Days before yesterday that the nightly run re-checks for late raw records. */
export const LATE_DAYS = 3;
/** Most days one scheduled run goes back to catch up on runs that did not happen. */
export const MAX_CATCH_UP_DAYS = 31;
/** The last `yesterday` a scheduled run completed (object metadata `day`); later runs catch up from there. */
export const ASSEMBLED_THROUGH_KEY = 'state/assembled-through';

/** What the assembler job accepts: an EventBridge scheduled event, or `{date, clients?, force?}` by hand. */
export interface AssembleRequest {
  date?: string;
  clients?: string[];
  force?: boolean;
  /** EventBridge scheduled events carry the firing time. */
  time?: string;
}

export interface AssembleSummary {
  days: string[];
  /** The formula-safe file of each client, event and day; `raw`: the file of the recorded values, built with it. */
  files: Array<Pick<AssembleResult, 'clientId' | 'event' | 'day' | 'key' | 'rawObjects' | 'events' | 'upToDate' | 'hoursBuilt'> & { raw: Pick<AssembleResult, 'key' | 'upToDate'> }>;
}

/**
 * The daily job: on schedule, assembles yesterday's files, re-checks the LATE_DAYS before it and catches up days
 * missed since the last completed run (at most MAX_CATCH_UP_DAYS), rebuilding only changed files; with `date`, that
 * day (`force` rebuilds even up-to-date files).
 */
export async function runDailyAssembly(store: EventStore, request: AssembleRequest = {}, now = new Date()): Promise<AssembleSummary> {
  let days: string[];
  // A scheduled run catches up and moves the mark; runs for a date or for named clients are partial and do neither.
  const scheduled = request.date === undefined && !request.clients;
  const through = scheduled ? (await store.head(ASSEMBLED_THROUGH_KEY))?.metadata.day : undefined;
  if (request.date !== undefined) {
    if (typeof request.date !== 'string' || !isCalendarDay(request.date)) throw new InvalidEventRequestError('date', `date must be a day written YYYY-MM-DD, got ${JSON.stringify(request.date)}`);
    days = [request.date];
  } else {
    const yesterday = daysBefore(utcDay(request.time ? new Date(request.time) : now), 1);
    const missed = through && isCalendarDay(through) && through < yesterday ? (Date.parse(yesterday) - Date.parse(through)) / 86_400_000 - 1 : 0;
    const span = Math.min(Math.max(LATE_DAYS, missed), MAX_CATCH_UP_DAYS);
    days = Array.from({ length: span + 1 }, (_, i) => daysBefore(yesterday, i));
  }
  const files: AssembleSummary['files'] = [];
  for (const day of days) {
    for (const r of await assembleDay(store, day, { clients: request.clients, force: request.force === true })) {
      files.push({
        clientId: r.clientId,
        event: r.event,
        day: r.day,
        key: r.key,
        rawObjects: r.rawObjects,
        events: r.events,
        upToDate: r.upToDate,
        hoursBuilt: r.hoursBuilt,
        raw: { key: r.raw.key, upToDate: r.raw.upToDate },
      });
    }
  }
  if (scheduled && (!through || through < days[0])) {
    await store.write(ASSEMBLED_THROUGH_KEY, Readable.from(['']), { contentType: 'text/plain', metadata: { day: days[0] } });
  }
  return { days, files };
}
