/** A full recount of a list straight from the table, in the shape of the count endpoint (what the counters must equal). */
import { queryAll, tableName } from '../shared/db/client.js';
import { keys } from '../shared/db/keys.js';

/**
 * Items per page of the recount. DynamoDB Local evaluates a Query without a `Limit` over the whole rest of the
 * partition before it cuts the page at 1 MB, so each page costs what is left: a 100,000-item list took 75 s to
 * recount in 68 pages (the first 2.5 s, the last 55 ms), and a 200,000-item list about four times that
 * (2026-11-28; with pages of 500, 3.3-4.9 s). DynamoDB stops at the page's end whatever the partition holds.
 */
const RECOUNT_PAGE = 1_000;

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
