/**
 * SES event notifications → newsletter events. Pure: no AWS. Handles the
 * event-publishing shape (`eventType`, configuration set → SNS) and the
 * older identity-notification shape (`notificationType`).
 */
import { createHash } from 'node:crypto';
import type { UnsubscribeCause } from '../subscribers/types.js';
import type { EventRecord } from './types.js';

/**
 * Message tags the sender puts on every newsletter message (SES
 * `EmailTags`), and link tags (`ses:tags="target_id:…;target_position:…"`).
 */
export const sesTagNames = {
  client: 'client_id',
  campaign: 'campaign_id',
  newsletter: 'newsletter_id',
  list: 'email_list_id',
  targetId: 'target_id',
  targetPosition: 'target_position',
} as const;

type Tags = Record<string, string[] | undefined>;

interface SesMail {
  timestamp: string;
  messageId?: string;
  destination?: string[];
  tags?: Tags;
}

export interface SesNotification {
  eventType?: string;
  notificationType?: string;
  mail: SesMail;
  bounce?: {
    bounceType: 'Permanent' | 'Transient' | 'Undetermined';
    bounceSubType?: string;
    bouncedRecipients: Array<{ emailAddress: string; diagnosticCode?: string; status?: string; action?: string }>;
    timestamp: string;
    feedbackId?: string;
  };
  complaint?: {
    complainedRecipients: Array<{ emailAddress: string }>;
    timestamp: string;
    feedbackId?: string;
    complaintFeedbackType?: string;
  };
  open?: { timestamp: string };
  click?: { timestamp: string; link: string; linkTags?: Tags };
  send?: Record<string, never>;
}

/** An unsubscription caused by a delivery event: from every list of the client where the address is subscribed. */
export interface DeliveryUnsubscribe {
  email: string;
  cause: UnsubscribeCause;
}

export type ParsedNotification =
  | { kind: 'events'; clientId: string; records: EventRecord[]; unsubscribe: DeliveryUnsubscribe[] }
  | { kind: 'ignored'; reason: string };

/** A notification, a stable id of its delivery, and the SQS message it came in (for partial batch responses). */
export interface Delivery {
  id: string;
  notification: unknown;
  /** SQS `messageId` of the record, when the event is an SQS batch. */
  itemId?: string;
}

const CLIENT_ID = /^[a-z0-9][a-z0-9_-]{1,62}$/;

const hash = (value: unknown) =>
  createHash('sha256')
    .update(typeof value === 'string' ? value : JSON.stringify(value))
    .digest('hex')
    .slice(0, 32);

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** An SNS envelope (`Message` is the SES notification, `MessageId` its id), as SNS delivers it to SQS or Lambda. */
function fromEnvelope(envelope: { Message?: unknown; MessageId?: unknown }): Omit<Delivery, 'itemId'> | undefined {
  if (typeof envelope?.Message !== 'string') return undefined;
  const id = typeof envelope.MessageId === 'string' && envelope.MessageId ? envelope.MessageId : hash(envelope.Message);
  return { id, notification: parseJson(envelope.Message) };
}

type LambdaRecord = { eventSource?: string; messageId?: string; body?: unknown; Sns?: { Message?: unknown; MessageId?: unknown } };

/**
 * The notifications in a Lambda event:
 * - an SQS batch (`Records[].body`): each body the SNS envelope JSON, or the
 *   bare SES notification with raw message delivery (its id then a hash of
 *   the body, the same on every redelivery);
 * - an SNS event (`Records[].Sns`), the shape of a direct subscription;
 * - for local feeding, one bare SES notification or an array of them.
 */
export function unwrapDeliveries(event: unknown): Delivery[] {
  const records = (event as { Records?: LambdaRecord[] })?.Records;
  if (Array.isArray(records)) {
    return records.flatMap((r): Delivery[] => {
      if (r?.Sns) {
        const d = fromEnvelope(r.Sns);
        return d ? [d] : [];
      }
      if (typeof r?.body !== 'string') return [];
      const itemId = typeof r.messageId === 'string' ? r.messageId : undefined;
      const body = parseJson(r.body) as { Type?: unknown; Message?: unknown; MessageId?: unknown } | undefined;
      const d = body && typeof body.Message === 'string' && body.Type === 'Notification' ? fromEnvelope(body) : { id: hash(r.body), notification: body };
      return [{ ...d!, ...(itemId ? { itemId } : {}) }];
    });
  }
  return (Array.isArray(event) ? (event as unknown[]) : [event]).map((notification) => ({ id: hash(notification), notification }));
}

const tag = (tags: Tags | undefined, name: string) => {
  const value = tags?.[name]?.[0];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** `Jane <Jane@Example.com>` → `jane@example.com`. */
export function addressOf(value: string): string {
  const angle = /<([^<>]+)>\s*$/.exec(value);
  return (angle ? angle[1] : value).trim().toLowerCase();
}

const integer = (value: string | undefined) => (value !== undefined && /^\d{1,10}$/.test(value) ? Number(value) : undefined);

/** Link tags first, then query parameters of the link with the same names. */
function clickTarget(click: NonNullable<SesNotification['click']>): { target_id?: string; target_position?: number } {
  let params: URLSearchParams | undefined;
  try {
    params = new URL(click.link).searchParams;
  } catch {
    params = undefined;
  }
  const id = tag(click.linkTags, sesTagNames.targetId) ?? params?.get(sesTagNames.targetId) ?? undefined;
  const position = integer(tag(click.linkTags, sesTagNames.targetPosition) ?? params?.get(sesTagNames.targetPosition) ?? undefined);
  return { ...(id ? { target_id: id } : {}), ...(position !== undefined ? { target_position: position } : {}) };
}

/**
 * Turns one SES notification into event records (spec §6) for its `client_id` tag's client, and its unsubscriptions:
 * a Permanent bounce (HARD_BOUNCE) or a complaint other than `not-spam` (READER) from every list of the client, since
 * neither is about one list. Notifications with no §6 event are ignored.
 */
export function parseSesNotification(input: unknown): ParsedNotification {
  const n = input as SesNotification;
  if (!n || typeof n !== 'object' || !n.mail || typeof n.mail !== 'object') return { kind: 'ignored', reason: 'not an SES notification' };
  const type = n.eventType ?? n.notificationType;
  const tags = n.mail.tags;
  const clientId = tag(tags, sesTagNames.client);
  if (!clientId || !CLIENT_ID.test(clientId)) return { kind: 'ignored', reason: `${type}: no valid ${sesTagNames.client} tag` };
  const listId = integer(tag(tags, sesTagNames.list));
  const common = {
    ...(tag(tags, sesTagNames.campaign) ? { campaign_id: tag(tags, sesTagNames.campaign) } : {}),
    ...(tag(tags, sesTagNames.newsletter) ? { newsletter_id: tag(tags, sesTagNames.newsletter) } : {}),
    ...(listId !== undefined ? { email_list_id: listId } : {}),
  };
  const destinations = (n.mail.destination ?? []).map(addressOf);
  const records: EventRecord[] = [];
  const unsubscribe: DeliveryUnsubscribe[] = [];
  switch (type) {
    case 'Send':
      for (const email of destinations) records.push({ event: 'nl_send', date: n.mail.timestamp, email, ...common });
      break;
    case 'Open':
      if (!n.open) return { kind: 'ignored', reason: 'Open without open object' };
      for (const email of destinations) records.push({ event: 'nl_display', date: n.open.timestamp, email, ...common });
      break;
    case 'Click': {
      if (!n.click) return { kind: 'ignored', reason: 'Click without click object' };
      for (const email of destinations) {
        records.push({ event: 'nl_click', date: n.click.timestamp, email, ...common, target_url: n.click.link, ...clickTarget(n.click) });
      }
      break;
    }
    case 'Bounce': {
      if (!n.bounce) return { kind: 'ignored', reason: 'Bounce without bounce object' };
      const hard = n.bounce.bounceType === 'Permanent';
      for (const r of n.bounce.bouncedRecipients ?? []) {
        const email = addressOf(r.emailAddress);
        const message = r.diagnosticCode ?? [n.bounce.bounceType, n.bounce.bounceSubType].filter(Boolean).join('/');
        records.push({ event: 'nl_bounce', date: n.bounce.timestamp, email, ...common, type: hard ? 'hard' : 'soft', message });
        if (hard) unsubscribe.push({ email, cause: 'HARD_BOUNCE' });
      }
      break;
    }
    case 'Complaint': {
      if (!n.complaint) return { kind: 'ignored', reason: 'Complaint without complaint object' };
      const feedback = n.complaint.complaintFeedbackType ?? 'unspecified';
      for (const r of n.complaint.complainedRecipients ?? []) {
        const email = addressOf(r.emailAddress);
        records.push({ event: 'nl_complaint', date: n.complaint.timestamp, email, ...common, type: feedback });
        if (feedback !== 'not-spam') unsubscribe.push({ email, cause: 'READER' });
      }
      break;
    }
    default:
      return { kind: 'ignored', reason: `${type ?? 'unknown'} notifications have no newsletter event` };
  }
  return { kind: 'events', clientId, records, unsubscribe };
}
