/**
 * The public surface of the subscriber domain for other domains (imports,
 * opt-in, events): the one write path, the subscriber read, the domain
 * errors and types. The API's services (listing, counting, deletion) are in
 * service.ts; this surface leaves them out, so the import worker's bundle
 * does not carry the deletion paths (recommendations, opt-ins).
 */
export { applyLines as applySubscribers, getSubscriber, sweepListWriters, type WriteOptions, type WriterSweep } from './list-writer.js';
export * from './errors.js';
export type { Report, ReportError, SubscriberLine, UnsubscribeCause } from './types.js';
export type { SubscriberItem as StoredSubscriber } from './store.js';
import { applyLines } from './list-writer.js';
import type { Report, SubscriberLine } from './types.js';

/**
 * Updates `data_*` and consent of a known subscriber (the opt-in form's
 * `update`): the line carries no `subscribed`, so it changes no
 * subscription and makes no event.
 */
export function updateSubscriberFields(clientId: string, listId: number, line: SubscriberLine): Promise<Report> {
  return applyLines(clientId, listId, [{ ...line, subscribed: undefined }]);
}
