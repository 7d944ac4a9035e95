/**
 * The one entry of every subscriber write that may change subscriptions
 * (list API, deprecated API, CSV import, opt-in confirmation, bounces): the
 * lines applied with exact counters (apply.ts) and their events stored. Kept
 * apart from service.ts so that the import worker's bundle leaves out the
 * deletion paths (recommendations, opt-ins).
 */
import { createHash } from 'node:crypto';
import { backoffMs, sleep } from '../db/client.js';
import { recordEvents, recordEventsOnce } from '../events/record.js';
import type { EventRecord } from '../events/types.js';
import { HttpError } from '../http/errors.js';
import { hashForLog, logger } from '../observability/index.js';
import { applyLines } from './apply.js';
import type { Report, SubscriberLine } from './types.js';

/**
 * Applies validated lines to one list (the last line of an address wins):
 * exact counters, one nl_subscribe / nl_unsubscribe event per state change,
 * recorded before it returns (shared/subscribers/apply.ts does the writing).
 */
export function applySubscribers(clientId: string, listId: number, lines: SubscriberLine[]): Promise<Report> {
  return applyLines(clientId, listId, lines, (unique, events, applied) => storeEvents(clientId, unique, events, applied));
}

/**
 * Stores the events of applied lines. Lines that all carry an opId (imports,
 * opt-in confirmations) are stored under a name derived from their opIds:
 * a retry rebuilds the same events and rewrites the same objects, so nothing
 * is lost or doubled. Other writes retry the store; when it still fails, the
 * events go to the log in full and the caller gets a 503 that says so.
 */
async function storeEvents(clientId: string, lines: SubscriberLine[], events: EventRecord[], applied: number): Promise<void> {
  if (lines.every((l) => l.opId !== undefined)) {
    const id = createHash('sha256').update(lines.map((l) => l.opId).join('\n')).digest('hex').slice(0, 40);
    await recordEventsOnce(clientId, events, `ops-${id}`);
    return;
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await recordEvents(clientId, events);
      return;
    } catch (err) {
      if (attempt < 3) {
        await sleep(backoffMs(attempt + 2));
        continue;
      }
      // Addresses never reach the logs: each event is logged with a hash of its email in its place.
      logger.error('events not stored', { error: err as Error, events: events.map(({ email, ...rest }) => ({ ...rest, emailHash: hashForLog(email) })) });
      throw new HttpError(
        503,
        `${applied} subscribers were applied, but their ${events.length} events could not be stored (they were logged, addresses hashed); the subscriber state is complete`,
        { 'retry-after': '1' },
      );
    }
  }
}

