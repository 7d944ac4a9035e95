/**
 * The subscriber domain's public surface for other domains: the write path, the subscriber read, errors and types.
 * The API's services (listing, counting, deletion) stay in service.ts, so the import worker does not bundle them.
 */
import { applyLines } from './writer.js';
export { getSubscriber } from './writer.js';
export * from './errors.js';
export type { Report, ReportError, SubscriberLine, UnsubscribeCause } from './types.js';
export type { SubscriberItem as StoredSubscriber } from './store.js';
import type { Report, SubscriberLine } from './types.js';
import { readCounters, readPage } from './store.js';

/** A subscribed member of a list as other domains read it (newsletter picks): its address and guid (the reader id). */
export interface Member {
  email: string;
  guid: string;
}

/**
 * Up to `count` subscribed members of a list, by email (the status index: unsubscribed members are never read), and
 * the key to continue after the last one (undefined at the end). One Query per 1 MB of members (≈ 4,000).
 */
export async function subscribedPage(clientId: string, listId: number, count: number, startKey?: Record<string, string>): Promise<{ members: Member[]; nextKey?: Record<string, string> }> {
  const page = await readPage({ clientId, listId, status: 'subscribed', offset: 0, count, startKey });
  return { members: page.items.map((s) => ({ email: s.email, guid: s.guid })), nextKey: page.nextKey };
}

/** The number of subscribed members of a list (its counters, exact once the stream has drained: one Query). */
export async function subscribedCount(clientId: string, listId: number): Promise<number> {
  return (await readCounters(clientId, listId)).subscribed;
}

/**
 * Applies validated lines to one list (the last line of an address wins), each item written conditioned on the
 * version read (writer.ts); counters, statistics and the nl_subscribe / nl_unsubscribe events follow from the
 * table's stream. `deadline` (epoch ms): no chunk starts within CHUNK_MARGIN_MS of it.
 */
export function applySubscribers(clientId: string, listId: number, lines: SubscriberLine[], o: { deadline?: number } = {}): Promise<Report> {
  return applyLines(clientId, listId, lines, o);
}

/** Applies an import chunk's lines (their opIds make a resumed chunk report what it applied before). */
export function importSubscribers(clientId: string, listId: number, lines: SubscriberLine[]): Promise<Report> {
  return applyLines(clientId, listId, lines);
}

/**
 * Updates `data_*` and consent of a known subscriber (the opt-in form's
 * `update`): the line carries no `subscribed`, so it changes no
 * subscription and makes no event.
 */
export function updateSubscriberFields(clientId: string, listId: number, line: SubscriberLine): Promise<Report> {
  return applyLines(clientId, listId, [{ ...line, subscribed: undefined }]);
}
