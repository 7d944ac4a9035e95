/**
 * GET /v1/users/export: a copy of what the service keeps about one address
 * for the caller's client (GDPR right of access): its memberships with their
 * data and consent records, its pending opt-ins, and the recommendation
 * data of its guids (reading history, theme preferences).
 */
import { batchGet, queryAll, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { listLists } from '../lists/lists.js';
import type { SubscriberItem } from '../subscribers/store.js';
import type * as v from 'valibot';
import { consentRecords } from './consent.js';
import { UnknownReaderError } from './errors.js';
import type { ExportSchema } from './schemas.js';

type Export = v.InferOutput<typeof ExportSchema>;

/** Key and bookkeeping attributes left out of a copy. */
const strip = (item: Record<string, unknown> | undefined) => {
  if (!item) return null;
  const { pk: _pk, sk: _sk, type: _type, ttl: _ttl, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, clientId: _e, ...rest } = item;
  return rest;
};

/** Everything kept about `email` for `clientId`; UnknownReaderError when nothing is (another client's reader included). */
export async function exportReader(clientId: string, email: string): Promise<Export> {
  const lists = await listLists(clientId);
  // By key, strongly consistent (the per-email index lags a write made a moment ago).
  const items = await batchGet<SubscriberItem>(lists.map((l) => keys.subscriber(clientId, l.id, email)));
  items.sort((a, b) => a.listId - b.listId);
  // The pending opt-ins only: the partition also lists the address's mailed confirmation links (TOKEN#…), which are not
  // data to export and must not make an address with nothing else found look known.
  const pending = await queryAll<Record<string, unknown>>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :pending)',
    ExpressionAttributeValues: { ':pk': keys.optinPendingPartition(clientId, email), ':pending': keys.optinPending(clientId, email, '').sk },
    ConsistentRead: true,
  });
  if (items.length === 0 && pending.length === 0) throw new UnknownReaderError(email);
  // The guids of the memberships and the ones they replaced: reading history under an old guid is this reader's too.
  const guids = [...new Set(items.flatMap((i) => [i.guid, ...(i.previousGuids ?? [])]))];
  const readerItems = await batchGet<Record<string, unknown>>(guids.flatMap((guid) => [keys.reader(clientId, guid), keys.readerPreferences(clientId, guid)]));
  const readerItem = (guid: string, sk: string) => strip(readerItems.find((r) => r.pk === keys.reader(clientId, guid).pk && r.sk === sk));
  return {
    email,
    memberships: items.map((i) => ({
      list_id: i.listId,
      subscribed: i.subscribed,
      unsubscribed_cause: i.subscribed ? null : (i.unsubscribedCause ?? 'READER'),
      guid: i.guid,
      previous_guids: i.previousGuids ?? [],
      subscribed_at: i.subscribedAt ?? null,
      data: i.data ?? {},
      consent: consentRecords(i).map((c) => ({ ...c, cause: c.cause ?? null, ip: c.ip ?? null, user_agent: c.user_agent ?? null })),
    })),
    pending_optins: pending.map((p) => ({ form_key: String(p.formKey), list_ids: (p.listIds as number[]) ?? [], data: (p.data as Record<string, unknown>) ?? {}, created_at: String(p.createdAt), expires_at: String(p.expiresAt) })),
    readers: guids.map((guid) => ({ guid, history: readerItem(guid, keys.reader(clientId, guid).sk), preferences: readerItem(guid, keys.readerPreferences(clientId, guid).sk) })),
  };
}
