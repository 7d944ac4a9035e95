import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchWrite, ddb, runPool, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';

/**
 * Deletes the pending opt-ins of these addresses (users/delete): no reminder
 * is sent to them any more, and their confirmation links subscribe nobody.
 */
export async function forgetPendingOptins(clientId: string, emails: string[]): Promise<void> {
  const found: Array<Record<string, string>> = [];
  await runPool(emails, 16, async (email) => {
    const out = await ddb.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.optinPendingPartition(clientId, email) },
        ProjectionExpression: 'pk, sk',
      }),
    );
    found.push(...((out.Items ?? []) as Array<Record<string, string>>));
  });
  await batchWrite(found.map((Key) => ({ DeleteRequest: { Key } })));
}
