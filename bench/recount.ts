/** A full recount of a list straight from the table, in the shape of the count endpoint (what the counters must equal). */
import { queryAll, tableName } from '../shared/db/client.js';
import { keys } from '../shared/db/keys.js';

export async function recountList(clientId: string, listId: number) {
  const totals = { subscribed: 0, unsubscribed: 0, cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 } };
  const items = await queryAll<{ subscribed: boolean; unsubscribedCause?: 'READER' }>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscribersPartition(clientId, listId) },
    ConsistentRead: true,
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
