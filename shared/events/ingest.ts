import { getClient } from '../clients/clients.js';
import { UnknownListError } from '../lists/errors.js';
import { applySubscribers, getSubscriber } from '../subscribers/index.js';
import { listsOfEmail } from '../subscribers/store.js';
import type { SubscriberLine } from '../subscribers/types.js';
import { recordEvents } from './record.js';
import { parseSesNotification, unwrapDeliveries, type Delivery, type DeliveryUnsubscribe } from './ses.js';
import { hashForLog, logger } from '../observability/index.js';
import { EVENT_ID_FIELD, type EventRecord } from './types.js';

export interface IngestSummary {
  notifications: number;
  events: number;
  unsubscribed: number;
  ignored: string[];
  /** SQS partial batch response: the messages to deliver again (the others are deleted from the queue). */
  batchItemFailures: Array<{ itemIdentifier: string }>;
}


/**
 * Unsubscribes the address from every list of the client where it is
 * subscribed (found through gsi2); returns the number of lists changed.
 * The opId makes a redelivered notification a no-op in applySubscribers.
 */
async function unsubscribeEverywhere(clientId: string, u: DeliveryUnsubscribe, deliveryId: string): Promise<number> {
  let changed = 0;
  for (const listId of await listsOfEmail(clientId, u.email)) {
    try {
      const current = await getSubscriber(clientId, listId, u.email);
      if (!current?.subscribed) continue;
      const line: SubscriberLine = { line: 1, email: u.email, subscribed: false, unsubscribedCause: u.cause, opId: `ses:${deliveryId}:${listId}:${u.email}`, consent: { source: u.cause === 'HARD_BOUNCE' ? 'bounce' : 'complaint' } };
      const report = await applySubscribers(clientId, listId, [line]);
      changed += report.nb_unsubscribed;
    } catch (err) {
      // A list deleted between the index read and the write.
      if (!(err instanceof UnknownListError)) throw err;
    }
  }
  if (changed === 0) logger.info('delivery event changed no subscription', { clientId, emailHash: hashForLog(u.email), cause: u.cause, deliveryId });
  return changed;
}

/**
 * The delivery-event ingester (SQS batch, SNS event or bare notifications): one raw object per client, event and UTC
 * day, each line with its notification's hidden id so redeliveries are dropped at assembly; then the unsubscriptions,
 * idempotently. Unknown shapes are logged and dropped; a fault fails the SQS messages concerned (partial batch response).
 */
export async function ingestSesEvents(event: unknown): Promise<IngestSummary> {
  const summary: IngestSummary = { notifications: 0, events: 0, unsubscribed: 0, ignored: [], batchItemFailures: [] };
  const deliveries = unwrapDeliveries(event);
  const failed = new Set<Delivery>();
  const fail = (d: Delivery, err: unknown) => {
    if (!d.itemId) throw err;
    logger.error('SES notification failed; SQS delivers it again', { deliveryId: d.id, error: err as Error });
    failed.add(d);
  };
  const clients = new Map<string, Promise<boolean>>();
  const known = (clientId: string) => {
    if (!clients.has(clientId)) clients.set(clientId, getClient(clientId).then(Boolean));
    return clients.get(clientId)!;
  };
  const byClient = new Map<string, Array<{ delivery: Delivery; records: EventRecord[]; unsubscribe: DeliveryUnsubscribe[] }>>();
  for (const delivery of deliveries) {
    summary.notifications++;
    const parsed = parseSesNotification(delivery.notification);
    if (parsed.kind === 'ignored') {
      summary.ignored.push(parsed.reason);
      continue;
    }
    try {
      if (!(await known(parsed.clientId))) {
        summary.ignored.push(`unknown client ${parsed.clientId}`);
        continue;
      }
    } catch (err) {
      clients.delete(parsed.clientId);
      fail(delivery, err);
      continue;
    }
    const records = parsed.records.map((r, i) => ({ ...r, [EVENT_ID_FIELD]: `${delivery.id}:${i}` }));
    const group = byClient.get(parsed.clientId) ?? [];
    group.push({ delivery, records, unsubscribe: parsed.unsubscribe });
    byClient.set(parsed.clientId, group);
  }
  for (const [clientId, items] of byClient) {
    try {
      await recordEvents(clientId, items.flatMap((i) => i.records));
    } catch (err) {
      for (const i of items) fail(i.delivery, err);
      continue;
    }
    for (const { delivery, records, unsubscribe } of items) {
      summary.events += records.length;
      try {
        for (const u of unsubscribe) summary.unsubscribed += await unsubscribeEverywhere(clientId, u, delivery.id);
      } catch (err) {
        fail(delivery, err);
      }
    }
  }
  summary.batchItemFailures = [...failed].map((d) => ({ itemIdentifier: d.itemId! }));
  if (summary.ignored.length > 0) logger.info('SES notifications ignored', { reasons: summary.ignored });
  return summary;
}
