import { getClient } from '../clients/clients.js';
import { config } from '../config.js';
import { EventFilesNotEnabledError, InvalidEventRequestError } from './errors.js';
import { assembleEvents } from './assemble.js';
import { csvHeaderLine, type CsvVariant } from './csv.js';
import { daysBefore, SETTLE_MINUTES, utcDay } from './days.js';
import { eventPaths, fileName } from './paths.js';
import type { EventStore } from './store.js';
import type { EventName } from './types.js';

export { SETTLE_MINUTES };

export type EventFile = {
  filename: string;
  /** False while the day is still open (today, or yesterday during the settle minutes). */
  complete: boolean;
} & ({ body: string } | { url: string });

/** True once a day's file can no longer change (barring late records, which the daily job re-checks). */
export function isDayClosed(day: string, now: Date): boolean {
  const closesAt = Date.parse(`${daysBefore(day, -1)}T00:00:00.000Z`) + SETTLE_MINUTES * 60_000;
  return now.getTime() >= closesAt;
}

async function requirePremium(clientId: string): Promise<void> {
  const client = await getClient(clientId);
  if (!client?.premiumEvents) {
    throw new EventFilesNotEnabledError(clientId);
  }
}

/**
 * The CSV file of one event and day for the client (spec 4.9): a closed day's assembled file, or an open day's running
 * file stitched from its hours (only hours the hourly job has not built are assembled). Files above
 * EVENTS_INLINE_MAX_BYTES come back as a presigned URL.
 */
export async function getEventFile(store: EventStore, clientId: string, event: EventName, day: string, now = new Date(), variant: CsvVariant = 'safe'): Promise<EventFile> {
  await requirePremium(clientId);
  if (day > utcDay(now)) throw new InvalidEventRequestError('date', `path.date: ${day} is in the future; files exist for past days and today (UTC)`);
  const complete = isDayClosed(day, now);
  const filename = fileName(event, day);
  let key: string | undefined = complete ? eventPaths.file(clientId, event, day, variant) : undefined;
  // A raw file is built on demand only, so the nightly job does not refresh it: check its sources every time.
  let head = key && variant === 'safe' ? await store.head(key) : undefined;
  if (!head) {
    const built = await assembleEvents(store, clientId, event, day, { target: complete ? 'file' : 'partial', variant });
    key = built.key;
    if (!key) return { filename, complete, body: csvHeaderLine(event) };
    head = await store.head(key);
    if (!head) throw new Error(`Event file ${key} vanished after assembly`);
  }
  if (head.size > config.eventsInlineMaxBytes) {
    const url = await store.presign(key!, { filename, contentType: 'text/csv; charset=utf-8', expiresIn: config.eventsUrlTtlSeconds });
    return { filename, complete, url };
  }
  let body = '';
  const decoder = new TextDecoder();
  for await (const chunk of await store.read(key!)) body += decoder.decode(chunk, { stream: true });
  return { filename, complete, body: body + decoder.decode() };
}
