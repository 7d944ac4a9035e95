/**
 * Subscriber changes as events for webhooks and the EventBridge bus, mapped from the raw event records the writes and
 * the SES ingester store, so a change goes out exactly when it was recorded and never slows the write. Pure: no I/O.
 */
import { createHash } from 'node:crypto';
import type { RawEventName } from '../events/types.js';

export const changeTypes = [
  'subscriber.subscribed',
  'subscriber.unsubscribed',
  'subscriber.deleted',
  'subscriber.bounced',
  'subscriber.complained',
  'import.finished',
] as const;
export type ChangeType = (typeof changeTypes)[number];

/** One change, as a webhook's body and an EventBridge event's `detail` (docs/api.md "Change events"). */
export interface ChangeEvent {
  /** Stable across retries and redeliveries: the `webhook-id`. */
  id: string;
  type: ChangeType;
  /** When the change happened (ISO 8601 UTC, milliseconds). */
  time: string;
  client_id: string;
  list_id: number | null;
  email: string | null;
  guid: string | null;
  /** Why an address left (`READER`, `PUBLISHER`, `BOUNCE`, …); else null. */
  cause: string | null;
  /** `subscribers` (API, forms, imports), `ses` (delivery notifications) or `imports` (the imported file). */
  source: 'subscribers' | 'ses' | 'imports';
  /** Type-specific fields (a bounce's type and message, the campaign; an import's file and counts). */
  data: Record<string, string | number>;
}

/** The raw events that are subscriber changes, and theirs. */
const typeOfRaw: Partial<Record<RawEventName, ChangeType>> = {
  nl_subscribe: 'subscriber.subscribed',
  nl_unsubscribe: 'subscriber.unsubscribed',
  nl_delete: 'subscriber.deleted',
  nl_bounce: 'subscriber.bounced',
  nl_complaint: 'subscriber.complained',
};

/** Client and event of a raw object's key (`raw/<client>/<event>/<day>/…`), when its event is a subscriber change. */
export function changeSource(key: string): { clientId: string; event: RawEventName; type: ChangeType } | undefined {
  const [root, clientId, event] = key.split('/');
  const type = typeOfRaw[event as RawEventName];
  return root === 'raw' && clientId && type ? { clientId, event: event as RawEventName, type } : undefined;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);
const str = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : null);

/**
 * The changes of one raw object, in its order (by date). The id derives from
 * the line's hidden id when it has one (an SES notification redelivered into
 * another object keeps it), else from the object's key and the line: the
 * writers store a retried write under the same key with the same lines, so a
 * redelivered change keeps its id.
 */
export function changesOfRaw(key: string, text: string): ChangeEvent[] {
  const source = changeSource(key);
  if (!source) return [];
  const changes: ChangeEvent[] = [];
  text.split('\n').forEach((line, index) => {
    if (!line.trim()) return;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const hidden = str(record._id);
    const id = `evt_${digest(hidden ? `${source.clientId}/${source.event}/${hidden}` : `${key}\n${index}\n${line}`)}`;
    const ses = source.type === 'subscriber.bounced' || source.type === 'subscriber.complained';
    const data: Record<string, string | number> = {};
    for (const [field, name] of [['campaign_id', 'campaign_id'], ['newsletter_id', 'newsletter_id'], ['type', source.type === 'subscriber.bounced' ? 'bounce_type' : 'complaint_type'], ['message', 'message']] as const) {
      const value = record[field];
      if (typeof value === 'string' || typeof value === 'number') data[name] = value;
    }
    changes.push({
      id,
      type: source.type,
      time: String(record.date),
      client_id: source.clientId,
      list_id: num(record.email_list_id),
      email: str(record.email),
      guid: str(record.guid),
      cause: source.type === 'subscriber.unsubscribed' ? (str(record.cause) ?? 'READER') : null,
      source: ses ? 'ses' : 'subscribers',
      data,
    });
  });
  return changes;
}

/** A change that is not read from a raw object (an import's end), with an id derived from what identifies it. */
export function directChange(clientId: string, type: ChangeType, identity: string, fields: Partial<Omit<ChangeEvent, 'id' | 'type' | 'client_id'>>): ChangeEvent {
  return {
    id: `evt_${digest(`${clientId}/${type}/${identity}`)}`,
    type,
    time: fields.time ?? new Date().toISOString(),
    client_id: clientId,
    list_id: fields.list_id ?? null,
    email: fields.email ?? null,
    guid: fields.guid ?? null,
    cause: fields.cause ?? null,
    source: fields.source ?? 'subscribers',
    data: fields.data ?? {},
  };
}
