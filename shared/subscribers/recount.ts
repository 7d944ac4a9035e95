/**
 * A list's counts from its items, and the backfill that sets its counters to them (docs/operations.md). Pages carry a
 * `Limit`: DynamoDB Local evaluates an unlimited Query over the whole rest of the partition for every page.
 */
import { queryAll, tableName, transactWrite } from '../db/client.js';
import { keys } from '../db/keys.js';
import type { CounterDeltas } from './rules.js';

const RECOUNT_PAGE = 1_000;

/** Counts a list's subscriber items one by one, in the shape of the count endpoint (what the counters must equal). */
export async function recountList(clientId: string, listId: number) {
  const totals = { subscribed: 0, unsubscribed: 0, cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 } };
  const items = await queryAll<{ subscribed: boolean; unsubscribedCause?: 'READER' }>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscribersPartition(clientId, listId) },
    ProjectionExpression: 'subscribed, unsubscribedCause',
    ConsistentRead: true,
    Limit: RECOUNT_PAGE,
  });
  for (const item of items) {
    if (item.subscribed) totals.subscribed++;
    else {
      totals.unsubscribed++;
      totals.cause[item.unsubscribedCause ?? 'READER']++;
    }
  }
  return totals;
}

/**
 * Sets a list's counters to a recount (its other shards removed, shard 0 holding the totals), in one transaction.
 * Run it while no write to the list is in the stream's lag: a change counted by the consumer between the recount
 * and this write would be counted twice. Returns the totals.
 */
export async function resetCounters(clientId: string, listId: number) {
  const totals = await recountList(clientId, listId);
  const shards = await queryAll<{ pk: string; sk: string }>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.countersPartition(clientId, listId) },
    ProjectionExpression: 'pk, sk',
    ConsistentRead: true,
  });
  const shard0 = keys.counterShard(clientId, listId, 0);
  const counters: CounterDeltas = { subscribed: totals.subscribed, unsubscribed: totals.unsubscribed, ...totals.cause };
  await transactWrite([
    ...shards.filter((s) => s.sk !== shard0.sk).map((Key) => ({ Delete: { TableName: tableName(), Key } })),
    { Put: { TableName: tableName(), Item: { ...shard0, ...counters } } },
  ]);
  return totals;
}
