import { BadRequestError } from '../http/errors.js';
import { assembleDay, type AssembleResult } from './assemble.js';
import { daysBefore, isCalendarDay, utcDay } from './days.js';
import type { EventStore } from './store.js';

/** Days before yesterday that the nightly run re-checks for late raw records. */
export const LATE_DAYS = 3;

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
  files: Array<Pick<AssembleResult, 'clientId' | 'event' | 'day' | 'key' | 'rawObjects' | 'events' | 'upToDate'>>;
}

/**
 * The daily job: without a date (the schedule, shortly after midnight UTC)
 * it assembles yesterday and re-checks the LATE_DAYS days before it, where
 * only files whose raw objects changed are rebuilt; with `date` it assembles
 * that day (`force` rebuilds even up-to-date files).
 */
export async function runDailyAssembly(store: EventStore, request: AssembleRequest = {}, now = new Date()): Promise<AssembleSummary> {
  let days: string[];
  if (request.date !== undefined) {
    if (typeof request.date !== 'string' || !isCalendarDay(request.date)) throw new BadRequestError(`date must be a day written YYYY-MM-DD, got ${JSON.stringify(request.date)}`);
    days = [request.date];
  } else {
    const yesterday = daysBefore(utcDay(request.time ? new Date(request.time) : now), 1);
    days = Array.from({ length: LATE_DAYS + 1 }, (_, i) => daysBefore(yesterday, i));
  }
  const files: AssembleSummary['files'] = [];
  for (const day of days) {
    for (const r of await assembleDay(store, day, { clients: request.clients, force: request.force === true })) {
      files.push({ clientId: r.clientId, event: r.event, day: r.day, key: r.key, rawObjects: r.rawObjects, events: r.events, upToDate: r.upToDate });
    }
  }
  return { days, files };
}
