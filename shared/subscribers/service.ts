/**
 * Subscriber service. IN PROGRESS (issue 3): signatures are fixed, bodies land shortly.
 */
import type { Report, SubscriberLine } from './types.js';

export interface StoredSubscriber {
  email: string;
  guid: string;
  subscribed: boolean;
  subscribedAt?: string;
  unsubscribedCause?: string;
  data: Record<string, unknown>;
  openTrackingConsent?: boolean;
}

/**
 * Applies validated lines to one list: exact counters, one nl_subscribe /
 * nl_unsubscribe event per state change (recorded in S3 before it returns),
 * returns the report counters for these lines (errors empty; the caller adds
 * its own validation errors). An address given twice: the last line wins.
 */
export async function applySubscribers(_clientId: string, _listId: number, _lines: SubscriberLine[]): Promise<Report> {
  throw new Error('applySubscribers: not implemented yet (issue 3 in progress)');
}

/** One subscriber of a list, or undefined. */
export async function getSubscriber(_clientId: string, _listId: number, _email: string): Promise<StoredSubscriber | undefined> {
  throw new Error('getSubscriber: not implemented yet (issue 3 in progress)');
}
