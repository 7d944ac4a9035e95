import { batchWrite, queryAll, runPool, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';

/**
 * Deletes the pending opt-ins of these addresses (users/delete): no reminder
 * is sent to them any more. Their confirmation links go too, pending or
 * already confirmed (each is listed in the address's partition): none keeps
 * the address or its submission, and following one subscribes nobody (404).
 */
export async function forgetPendingOptins(clientId: string, emails: string[]): Promise<void> {
  const found: Array<Record<string, string>> = [];
  await runPool(emails, 16, async (email) => {
    const items = await queryAll<Record<string, string>>({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.optinPendingPartition(clientId, email) },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    });
    for (const item of items) {
      found.push({ pk: item.pk, sk: item.sk });
      if (item.sk.startsWith(keys.optinTokenRefPrefix())) found.push(keys.optinToken(item.sk.slice(keys.optinTokenRefPrefix().length)));
    }
  });
  await batchWrite(found.map((Key) => ({ DeleteRequest: { Key } })));
}
