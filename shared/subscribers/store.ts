/**
 * DynamoDB access for subscribers: items of a list partition, the sharded
 * counters of a list, and the GSIs for status paging and per-email lookup.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGet, ddb, queryAll, tableName } from '../db/client.js';
import { keys, listIdFromEmailSortKey } from '../db/keys.js';
import { dailyUpdate, type DailyDeltas } from './daily.js';
import type { CounterDeltas, SubscriberState } from './rules.js';

/** Number of counter shards per list: concurrent writers rarely touch the same one. */
export const COUNTER_SHARDS = 16;

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

/**
 * Every attribute of a subscriber's state, none of its keys (the type checks that none is missing): what the bulk
 * writer reads to apply a line (applyLine builds the next state from these alone). The keys, index keys, ids and
 * writeId are about half of a small item's bytes (710 B of JSON, 345 B of state for a line with one data field),
 * which DynamoDB and the SDK would otherwise serialize and parse for every line of a re-sent list (the data-changed
 * POST, 2026-11-27: docs/benchmarks.md).
 */
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
const stateNames = Object.keys(STATE_ATTRIBUTES);
/** The projection of a subscriber's state (every name through a placeholder: `data` is a reserved word). */
const STATE_PROJECTION = {
  ProjectionExpression: stateNames.map((_, i) => `#s${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(stateNames.map((name, i) => [`#s${i}`, name])),
};

/** The states of some addresses of a list (strongly consistent), by email: the state attributes only. */
async function readStates(clientId: string, listId: number, emails: string[]): Promise<Map<string, SubscriberState>> {
  const items = await batchGet<SubscriberState>(
    emails.map((email) => keys.subscriber(clientId, listId, email)),
    { projection: STATE_PROJECTION },
  );
  return new Map(items.map((item) => [item.email, item]));
}

const ASCII = /^[^\u0080-\uffff]*$/;

/** Orders addresses as DynamoDB orders sort keys: by their UTF-8 bytes (JavaScript's own order differs beyond ASCII). */
export function compareKeys(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Items a range read takes: a range holding more overflows. Its Query asks for one more: DynamoDB answers a
 * LastEvaluatedKey whenever it evaluated `Limit` items, whether or not the range holds more, so with `Limit` equal
 * to a 500-line chunk every chunk of a re-sent list overflowed in AWS and the list's next chunks read by key
 * (2026-11-28; DynamoDB Local leaves the key out when the range ends there, so the benchmarks did not show it).
 */
const RANGE_LIMIT = 500;
/** After a range read that overflowed, the list's next chunks in this process read by key (BatchGetItem). */
const SKIP_AFTER_OVERFLOW = 64;
/** Per list, chunks left to read by key before a range read is tried again (held by the list writer's per-container object). */
export type RangeSkips = Map<string, number>;

/**
 * Current states of some addresses of a list (STATE_PROJECTION), given sorted by compareKeys, for a
 * bulk writer (strongly consistent). When the addresses are dense in the list
 * (a re-sent list, or a new list filled in order), one Query of the key
 * range [first, last] reads them at about half the cost of BatchGetItem's
 * point reads on DynamoDB Local; when the range holds more than RANGE_LIMIT
 * items, the rest are read with BatchGetItem, and the list's next
 * SKIP_AFTER_OVERFLOW chunks in this process are read with BatchGetItem only.
 */
export async function readSortedSubscribers(rangeSkips: RangeSkips, clientId: string, listId: number, sortedEmails: string[]): Promise<Map<string, SubscriberState>> {
  const listKey = `${clientId}#${listId}`;
  const skips = rangeSkips.get(listKey) ?? 0;
  if (sortedEmails.length < 2 || skips > 0) {
    if (skips > 0) rangeSkips.set(listKey, skips - 1);
    return readStates(clientId, listId, sortedEmails);
  }
  const first = keys.subscriber(clientId, listId, sortedEmails[0]);
  const last = keys.subscriber(clientId, listId, sortedEmails[sortedEmails.length - 1]);
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
      ExpressionAttributeValues: { ':pk': first.pk, ':a': first.sk, ':b': last.sk },
      ...STATE_PROJECTION,
      ConsistentRead: true,
      Limit: RANGE_LIMIT + 1,
    }),
  );
  const wanted = new Set(sortedEmails);
  const found = new Map<string, SubscriberState>();
  for (const item of (out.Items ?? []) as SubscriberState[]) if (wanted.has(item.email)) found.set(item.email, item);
  if (!out.LastEvaluatedKey) return found;
  rangeSkips.set(listKey, SKIP_AFTER_OVERFLOW);
  if (rangeSkips.size > 1_000) rangeSkips.delete(rangeSkips.keys().next().value!);
  const readUpTo = String(out.LastEvaluatedKey.sk).slice(keys.subscriberPrefix().length);
  const rest = sortedEmails.filter((email) => compareKeys(email, readUpTo) > 0);
  for (const [email, item] of await readStates(clientId, listId, rest)) found.set(email, item);
  return found;
}

/** The transaction item that adds deltas to one counter shard (random by default), or undefined when nothing moves. */
export function counterUpdate(clientId: string, listId: number, deltas: CounterDeltas, shard = Math.floor(Math.random() * COUNTER_SHARDS)) {
  const moved = Object.entries(deltas).filter(([, n]) => n !== 0);
  if (moved.length === 0) return undefined;
  return {
    Update: {
      TableName: tableName(),
      Key: keys.counterShard(clientId, listId, shard),
      UpdateExpression: `ADD ${moved.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(moved.map(([name], i) => [`#c${i}`, name])),
      ExpressionAttributeValues: Object.fromEntries(moved.map(([, n], i) => [`:c${i}`, n])),
    },
  };
}

/**
 * The items that move a list's counters: the update of one random counter shard and, with the same shard
 * index, of each day's shard (daily.ts); 0 to 1 + days.size items, for the caller's transaction. The day
 * shards change in the very transaction as the counters, so their sums never disagree.
 */
export function counterWrites(clientId: string, listId: number, deltas: CounterDeltas, days: ReadonlyMap<string, DailyDeltas>) {
  const shard = Math.floor(Math.random() * COUNTER_SHARDS);
  const counter = counterUpdate(clientId, listId, deltas, shard);
  const daily = [...days].map(([day, d]) => dailyUpdate(clientId, listId, day, shard, d));
  return [counter, ...daily].filter((item) => item !== undefined);
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
