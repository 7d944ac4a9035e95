/**
 * DynamoDB access for subscribers: items of a list partition, the conditional
 * statements that write them, the counters of a list (written by the stream
 * consumer), and the GSIs for status paging and per-email lookup.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGet, ddb, queryAll, tableName, type WriteStatement } from '../db/client.js';
import { keys, listIdFromEmailSortKey } from '../db/keys.js';
import type { CounterDeltas, SubscriberState } from './rules.js';

export type SubscriberItem = SubscriberState & { pk: string; sk: string; clientId: string; listId: number };

/** The item to store for a subscriber state, with its keys and GSI keys (one object literal: this runs once per written line). */
export function toItem(clientId: string, listId: number, state: SubscriberState): SubscriberItem & Record<string, unknown> {
  const { pk, sk } = keys.subscriber(clientId, listId, state.email);
  const { gsi1pk, gsi1sk } = keys.subscriberByStatus(clientId, listId, state.subscribed, state.email);
  const { gsi2pk, gsi2sk } = keys.subscriberByEmail(clientId, state.email, listId);
  return { pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, type: 'subscriber', clientId, listId, ...state };
}

/** Current items of some addresses of a list (strongly consistent), by email. */
export async function readSubscribers(clientId: string, listId: number, emails: string[]): Promise<Map<string, SubscriberItem>> {
  const items = await batchGet<SubscriberItem>(emails.map((email) => keys.subscriber(clientId, listId, email)));
  return new Map(items.map((item) => [item.email, item]));
}

/** Every attribute of a subscriber's state, none of its keys (the type checks that none is missing): what applyLine reads. */
const STATE_ATTRIBUTES = {
  email: true,
  guid: true,
  subscribed: true,
  subscribedAt: true,
  unsubscribedAt: true,
  unsubscribedCause: true,
  data: true,
  openTrackingConsent: true,
  createdAt: true,
  updatedAt: true,
  version: true,
  lastOpId: true,
  lastOutcome: true,
  lastImportFile: true,
  consent: true,
  previousGuids: true,
} satisfies Record<keyof SubscriberState, true>;
const stateNames = Object.keys(STATE_ATTRIBUTES) as Array<keyof SubscriberState>;
/** The projection of a subscriber's state (every name through a placeholder: `data` is a reserved word). */
const STATE_PROJECTION = {
  ProjectionExpression: stateNames.map((_, i) => `#s${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(stateNames.map((name, i) => [`#s${i}`, name])),
};

/** The states of some addresses of a list (strongly consistent), by email: the state attributes only. */
export async function readStates(clientId: string, listId: number, emails: string[]): Promise<Map<string, SubscriberState>> {
  const items = await batchGet<SubscriberState>(
    emails.map((email) => keys.subscriber(clientId, listId, email)),
    { projection: STATE_PROJECTION },
  );
  return new Map(items.map((item) => [item.email, item]));
}

/**
 * The PartiQL statement that writes a subscriber's next state, conditioned on what was read: an INSERT for a new
 * address (fails with DuplicateItem when another writer created it meanwhile), else an UPDATE of every attribute
 * (the absent ones removed) where the version is still `priorVersion` (fails with ConditionalCheckFailed).
 */
export function writeStatement(clientId: string, listId: number, next: SubscriberState, priorVersion: number | undefined): WriteStatement {
  const item = toItem(clientId, listId, next);
  const names = Object.keys(item).filter((name) => item[name] !== undefined);
  const table = tableName();
  if (priorVersion === undefined) {
    return { Statement: `INSERT INTO "${table}" VALUE {${names.map((name) => `'${name}': ?`).join(', ')}}`, Parameters: names.map((name) => item[name]) };
  }
  const set = names.filter((name) => name !== 'pk' && name !== 'sk');
  const removed = stateNames.filter((name) => item[name] === undefined);
  return {
    Statement: `UPDATE "${table}" ${set.map((name) => `SET "${name}" = ?`).join(' ')}${removed.map((name) => ` REMOVE "${name}"`).join('')} WHERE "pk" = ? AND "sk" = ? AND "version" = ?`,
    Parameters: [...set.map((name) => item[name]), item.pk, item.sk, priorVersion],
  };
}

/** The PartiQL statement that deletes a subscriber if its version is still the one read. */
export function deleteStatement(clientId: string, listId: number, email: string, version: number): WriteStatement {
  const { pk, sk } = keys.subscriber(clientId, listId, email);
  return { Statement: `DELETE FROM "${tableName()}" WHERE "pk" = ? AND "sk" = ? AND "version" = ?`, Parameters: [pk, sk, version] };
}

/**
 * The transaction item that adds deltas to a list's counters (shard 0; tables written by earlier versions may hold
 * more shards, which readCounters sums), or undefined when nothing moves.
 */
export function counterUpdate(clientId: string, listId: number, deltas: CounterDeltas) {
  const moved = Object.entries(deltas).filter(([, n]) => n !== 0);
  if (moved.length === 0) return undefined;
  return {
    Update: {
      TableName: tableName(),
      Key: keys.counterShard(clientId, listId, 0),
      UpdateExpression: `ADD ${moved.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(moved.map(([name], i) => [`#c${i}`, name])),
      ExpressionAttributeValues: Object.fromEntries(moved.map(([, n], i) => [`:c${i}`, n])),
    },
  };
}

/** The list's counters: the sum of its shards (one Query). */
export async function readCounters(clientId: string, listId: number): Promise<CounterDeltas> {
  const totals: CounterDeltas = { subscribed: 0, unsubscribed: 0, HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 };
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.countersPartition(clientId, listId) },
      ConsistentRead: true,
    }),
  );
  for (const shard of out.Items ?? []) {
    for (const name of Object.keys(totals) as Array<keyof CounterDeltas>) totals[name] += Number(shard[name] ?? 0);
  }
  return totals;
}

/** The ids of the lists an address is in (GSI2; eventually consistent, so callers re-read by key). */
export async function listsOfEmail(clientId: string, email: string): Promise<number[]> {
  const items = await queryAll<{ gsi2sk: string }>({
    TableName: tableName(),
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.emailPartition(clientId, email) },
    ProjectionExpression: 'gsi2sk',
  });
  return items.map((item) => listIdFromEmailSortKey(item.gsi2sk));
}

export interface PageRequest {
  clientId: string;
  listId: number;
  status?: 'subscribed' | 'unsubscribed';
  search?: string;
  offset: number;
  count: number;
  startKey?: Record<string, string>;
}

/** The key of an item in the index a page reads, to continue after it. */
function keyOf(item: SubscriberItem & Record<string, unknown>, byStatus: boolean): Record<string, string> {
  const key: Record<string, string> = { pk: item.pk, sk: item.sk };
  if (byStatus) Object.assign(key, { gsi1pk: item.gsi1pk as string, gsi1sk: item.gsi1sk as string });
  return key;
}

/** The partition a page reads, so a cursor can be checked against it. */
export function pagePartition(req: Pick<PageRequest, 'clientId' | 'listId' | 'status'>): { attribute: 'pk' | 'gsi1pk'; value: string } {
  return req.status
    ? { attribute: 'gsi1pk', value: keys.subscribersByStatusPartition(req.clientId, req.listId, req.status === 'subscribed') }
    : { attribute: 'pk', value: keys.subscribersPartition(req.clientId, req.listId) };
}

/**
 * One page of a list's subscribers, by email: skips `offset` items with
 * count-only reads, then returns up to `count` items and the key to continue
 * after the last one (undefined at the end).
 */
export async function readPage(req: PageRequest): Promise<{ items: SubscriberItem[]; nextKey?: Record<string, string> }> {
  const byStatus = req.status !== undefined;
  const partition = pagePartition(req);
  const sortAttribute = byStatus ? 'gsi1sk' : 'sk';
  const prefix = byStatus ? (req.search ?? '') : `${keys.subscriberPrefix()}${req.search ?? ''}`;
  // DynamoDB refuses an empty begins_with on an index key: no prefix, no sort-key condition.
  const base: QueryCommandInput = prefix
    ? {
        TableName: tableName(),
        IndexName: byStatus ? 'gsi1' : undefined,
        KeyConditionExpression: '#p = :p AND begins_with(#s, :prefix)',
        ExpressionAttributeNames: { '#p': partition.attribute, '#s': sortAttribute },
        ExpressionAttributeValues: { ':p': partition.value, ':prefix': prefix },
      }
    : {
        TableName: tableName(),
        IndexName: 'gsi1',
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': partition.attribute },
        ExpressionAttributeValues: { ':p': partition.value },
      };
  let startKey: Record<string, unknown> | undefined = req.startKey;
  let toSkip = req.offset;
  while (toSkip > 0) {
    const out = await ddb.send(new QueryCommand({ ...base, Select: 'COUNT', Limit: Math.min(toSkip, 10_000), ExclusiveStartKey: startKey }));
    toSkip -= out.Count ?? 0;
    startKey = out.LastEvaluatedKey;
    if (!startKey) return { items: [] };
  }
  const items: SubscriberItem[] = [];
  let more = true;
  while (items.length < req.count && more) {
    const out = await ddb.send(new QueryCommand({ ...base, Limit: req.count - items.length, ExclusiveStartKey: startKey }));
    items.push(...((out.Items ?? []) as SubscriberItem[]));
    startKey = out.LastEvaluatedKey;
    more = startKey !== undefined;
  }
  const last = items.at(-1);
  return { items, nextKey: more && last ? keyOf(last as SubscriberItem & Record<string, unknown>, byStatus) : undefined };
}
