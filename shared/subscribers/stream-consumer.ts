/**
 * The table stream's consumer: counters, day statistics and raw events from subscriber records. Exactly once: the
 * transaction that moves counters also tags its records applied (Lambda's stream events name no shard to checkpoint).
 */
import { createHash } from 'node:crypto';
import type { DynamoDBRecord } from 'aws-lambda';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { backoffMs, batchGet, isTransactionConflict, sleep, tableName, transactWrite } from '../db/client.js';
import { keys } from '../db/keys.js';
import { recordEventsOnce } from '../events/record.js';
import type { EventRecord } from '../events/types.js';
import { count } from '../observability/index.js';
import { addDaily, dailyUpdate, zeroDaily, type DailyDeltas } from './daily.js';
import { addDeltas, zeroDeltas, type CounterDeltas } from './rules.js';
import { listChangeOf, type ItemChange, type ListChange } from './stream-changes.js';
import { counterUpdate, type SubscriberItem } from './store.js';

/** How long a list's applied tags are kept: past the stream's 24 hours of retention. */
const APPLIED_TTL_SECONDS = 2 * 24 * 3600;
/** Transaction items at most (DynamoDB's limit): counters, day shards and applied items of a group of records. */
const MAX_ITEMS = 100;
const MAX_CONFLICTS = 10;

/** True for a record of a subscriber item (the event source mapping's filter does the same in AWS). */
export function isSubscriberRecord(record: DynamoDBRecord): boolean {
  return record.dynamodb?.Keys?.sk?.S?.startsWith(keys.subscriberPrefix()) === true;
}

/** A subscriber record as an item change, read at `seen`. */
export function itemChangeOf(record: DynamoDBRecord, seen = Date.now()): ItemChange {
  const image = (i: NonNullable<DynamoDBRecord['dynamodb']>['NewImage']) => (i ? (unmarshall(i as never) as SubscriberItem) : undefined);
  return { id: record.eventID ?? '', at: (record.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000, seen, old: image(record.dynamodb?.OldImage), next: image(record.dynamodb?.NewImage) };
}

/** A change and what it does to its list. */
interface Counted {
  change: ItemChange;
  list: ListChange;
}

const digestOf = (id: string) => createHash('sha256').update(id).digest();
const tagOf = (id: string) => digestOf(id).toString('base64url').slice(0, 11);
/** Slots of a second's applied tags: an item holds ≈ 25,000 tags (400 KB), 8 of them a list's writes of a second many times over. */
const SLOTS = 8;
/**
 * The applied item of a change: its list, the second of its new state's `updatedAt` (of the record's time for a
 * deletion) and a slot from its id: what the record itself carries, so a retry finds the same item.
 */
const appliedKey = ({ change, list }: Counted) =>
  keys.streamApplied(list.clientId, list.listId, Math.floor((change.next ? Date.parse(change.next.updatedAt) : change.at) / 1000), digestOf(change.id)[11] % SLOTS);
const keyId = (k: { pk: string; sk: string }) => `${k.pk}\u0000${k.sk}`;

/** True when a change moves a counter or makes an event (the others need no transaction: applying them twice is harmless). */
const moves = ({ deltas, daily, events }: ListChange) => events.length > 0 || Object.values(deltas).some((n) => n !== 0) || Object.values(daily).some((n) => n !== 0);

/** The transaction items a change touches, by id: its list's counters, its day shard, its applied item. */
const targetsOf = (c: Counted) => [`c\u0000${c.list.clientId}#${c.list.listId}`, `d\u0000${c.list.clientId}#${c.list.listId}#${c.list.day}`, keyId(appliedKey(c))];

/** Cuts changes, in order, into groups whose transaction stays within MAX_ITEMS. */
function groupsOf(changes: Counted[]): Counted[][] {
  const groups: Counted[][] = [];
  let group: Counted[] = [];
  let targets = new Set<string>();
  for (const change of changes) {
    const more = targetsOf(change).filter((t) => !targets.has(t));
    if (targets.size + more.length > MAX_ITEMS) {
      groups.push(group);
      group = [];
      targets = new Set();
    }
    group.push(change);
    for (const t of targetsOf(change)) targets.add(t);
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

interface AppliedItem {
  pk: string;
  sk: string;
  tags?: Set<string>;
}

/** The transaction that moves counters and day shards by `changes` and tags them applied (conditioned on `read`). */
function transactionOf(changes: Counted[], read: Map<string, AppliedItem>) {
  const lists = new Map<string, { clientId: string; listId: number; deltas: CounterDeltas; days: Map<string, DailyDeltas> }>();
  for (const { list: lc } of changes) {
    const id = `${lc.clientId}#${lc.listId}`;
    let list = lists.get(id);
    if (!list) lists.set(id, (list = { clientId: lc.clientId, listId: lc.listId, deltas: zeroDeltas(), days: new Map() }));
    addDeltas(list.deltas, lc.deltas);
    list.days.set(lc.day, addDaily(list.days.get(lc.day) ?? zeroDaily(), lc.daily));
  }
  const moves = [...lists.values()].flatMap(({ clientId, listId, deltas, days }) => [
    counterUpdate(clientId, listId, deltas),
    ...[...days].map(([day, daily]) => dailyUpdate(clientId, listId, day, 0, daily)),
  ]);
  const tags = new Map<string, { key: { pk: string; sk: string }; tags: string[] }>();
  for (const c of changes) {
    const key = appliedKey(c);
    const entry = tags.get(keyId(key)) ?? { key, tags: [] };
    entry.tags.push(tagOf(c.change.id));
    tags.set(keyId(key), entry);
  }
  const ttl = Math.floor(Date.now() / 1000) + APPLIED_TTL_SECONDS;
  const applied = [...tags.values()].map(({ key, tags: added }) => {
    const size = read.get(keyId(key))?.tags?.size ?? 0;
    return {
      Update: {
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'ADD #t :tags SET #ttl = :ttl',
        ConditionExpression: size === 0 ? 'attribute_not_exists(#t)' : 'size(#t) = :n',
        ExpressionAttributeNames: { '#t': 'tags', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':tags': new Set(added), ':ttl': ttl, ...(size === 0 ? {} : { ':n': size }) },
      },
    };
  });
  return [...moves.filter((item) => item !== undefined), ...applied];
}

/** Stores events under a name derived from the first record of the group: a retry of the same records rewrites it. */
async function storeEvents(changes: Counted[], name: string): Promise<void> {
  const byClient = new Map<string, EventRecord[]>();
  for (const { list: lc } of changes) if (lc.events.length > 0) byClient.set(lc.clientId, [...(byClient.get(lc.clientId) ?? []), ...lc.events]);
  await Promise.all([...byClient].map(([clientId, events]) => recordEventsOnce(clientId, events, name)));
}

/** Applies one group: skips the records already tagged, stores the rest's events, then commits counters and tags. */
async function applyGroup(group: Counted[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const keysRead = [...new Map(group.map((c) => [keyId(appliedKey(c)), appliedKey(c)])).values()];
    const read = new Map((await batchGet<AppliedItem>(keysRead)).map((item) => [keyId(item), item]));
    const fresh = group.filter((c) => !read.get(keyId(appliedKey(c)))?.tags?.has(tagOf(c.change.id)));
    if (fresh.length === 0) return;
    await storeEvents(fresh, `s-${tagOf(fresh[0].change.id)}`);
    try {
      await transactWrite(transactionOf(fresh, read));
      count('SubscriberChangesCounted', fresh.length);
      return;
    } catch (err) {
      if (!isTransactionConflict(err) || attempt >= MAX_CONFLICTS) throw err;
      await sleep(backoffMs(attempt));
    }
  }
}

/**
 * Applies a batch of stream records (the non-subscriber ones are ignored), in order, in groups of one transaction
 * each. Returns the ids of the records applied (or found applied before); at the first group that fails, the
 * failure, and the records from there on are not in `done` (the caller reports them for a retry).
 */
export async function applyStreamRecords(records: DynamoDBRecord[]): Promise<{ done: Set<string>; failure?: unknown }> {
  const seen = Date.now();
  const counted: Counted[] = [];
  const done = new Set<string>();
  for (const record of records) {
    const change = isSubscriberRecord(record) ? itemChangeOf(record, seen) : undefined;
    const list = change && listChangeOf(change);
    if (change && list && moves(list)) counted.push({ change, list });
    else done.add(record.eventID ?? '');
  }
  for (const group of groupsOf(counted)) {
    try {
      await applyGroup(group);
    } catch (failure) {
      return { done, failure };
    }
    for (const c of group) done.add(c.change.id);
  }
  return { done };
}
