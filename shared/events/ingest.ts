import { getClient } from '../clients/clients.js';
import { NotFoundError } from '../http/errors.js';
import { applySubscribers, getSubscriber } from '../subscribers/service.js';
import type { SubscriberLine } from '../subscribers/types.js';
import { recordEventsOnce } from './record.js';
import { parseSesNotification, unwrapDeliveries, type DeliveryUnsubscribe } from './ses.js';

export interface IngestSummary {
  notifications: number;
  events: number;
  unsubscribed: number;
  ignored: string[];
}

const log = (message: string, detail: Record<string, unknown>) => console.log(JSON.stringify({ level: 'info', message, ...detail }));

/** Unsubscribes a subscribed address; an unknown address, list or an already unsubscribed one changes nothing. */
async function unsubscribe(clientId: string, u: DeliveryUnsubscribe, opId: string): Promise<boolean> {
  try {
    const current = await getSubscriber(clientId, u.listId, u.email);
    if (!current?.subscribed) return false;
    // opId makes a redelivered notification a no-op in applySubscribers.
    const line: SubscriberLine & { opId: string } = { line: 1, email: u.email, subscribed: false, unsubscribedCause: u.cause, opId };
    const report = await applySubscribers(clientId, u.listId, [line]);
    return report.nb_unsubscribed > 0;
  } catch (err) {
    if (err instanceof NotFoundError) {
      log('delivery event for an unknown list', { clientId, listId: u.listId, cause: err.message });
      return false;
    }
    throw err;
  }
}

/**
 * The delivery-event ingester: records the newsletter events of SES
 * notifications (idempotently per SNS message, so redeliveries add nothing)
 * and applies their unsubscriptions through the subscriber service, which
 * records nl_unsubscribe itself. Notifications of unknown clients are
 * dropped with a log line. Faults propagate, so Lambda retries the message.
 */
export async function ingestSesEvents(event: unknown): Promise<IngestSummary> {
  const summary: IngestSummary = { notifications: 0, events: 0, unsubscribed: 0, ignored: [] };
  for (const { id, notification } of unwrapDeliveries(event)) {
    summary.notifications++;
    const parsed = parseSesNotification(notification);
    if (parsed.kind === 'ignored') {
      summary.ignored.push(parsed.reason);
      continue;
    }
    if (!(await getClient(parsed.clientId))) {
      summary.ignored.push(`unknown client ${parsed.clientId}`);
      continue;
    }
    await recordEventsOnce(parsed.clientId, parsed.records, `ses-${id}`);
    summary.events += parsed.records.length;
    for (const u of parsed.unsubscribe) {
      if (await unsubscribe(parsed.clientId, u, `ses:${id}:${u.listId}:${u.email}`)) summary.unsubscribed++;
    }
  }
  if (summary.ignored.length > 0) log('SES notifications ignored', { reasons: summary.ignored });
  return summary;
}
