/**
 * Webhook endpoints of a client: one item each in the client's partition
 * (`WEBHOOK#<id>`), with the signing secret; and the version of the set
 * (`WEBHOOKSET`), which every registration moves on in the same transaction
 * as its webhook, so registrations that race cannot both pass the limit.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailure, queryAll, tableName, transactWrite } from '../db/client.js';
import { keys } from '../db/keys.js';
import type { ChangeType } from './changes.js';
import { UnknownWebhookError } from './errors.js';

export interface StoredWebhook {
  id: string;
  clientId: string;
  url: string;
  events: ChangeType[];
  secret: string;
  createdAt: string;
}

/** The version of the client's set of webhooks (0 before its first registration); read it before counting them. */
export async function webhookSetVersion(clientId: string): Promise<number> {
  const { Item } = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.webhookSet(clientId), ConsistentRead: true }));
  return typeof Item?.version === 'number' ? Item.version : 0;
}

/**
 * Puts a webhook if the client's set of webhooks is still at `version` (no
 * registration since it was read), and moves the version on: one
 * transaction. A TransactionCanceledException (isTransactionConflict) means
 * another registration came first: re-read and count again.
 */
export async function putWebhook(hook: StoredWebhook, version: number): Promise<void> {
  const set = keys.webhookSet(hook.clientId);
  await transactWrite([
    { Put: { TableName: tableName(), Item: { ...keys.webhook(hook.clientId, hook.id), ...hook }, ConditionExpression: 'attribute_not_exists(pk)' } },
    {
      Update: {
        TableName: tableName(),
        Key: set,
        UpdateExpression: 'SET version = :next',
        ConditionExpression: version === 0 ? 'attribute_not_exists(version) OR version = :seen' : 'version = :seen',
        ExpressionAttributeValues: { ':next': version + 1, ':seen': version },
      },
    },
  ]);
}

/** The client's webhooks, oldest first (ids are not ordered: sorted by creation). */
export async function webhooksOf(clientId: string, { consistent = false }: { consistent?: boolean } = {}): Promise<StoredWebhook[]> {
  const items = await queryAll<StoredWebhook>({
    TableName: tableName(),
    ConsistentRead: consistent,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.webhook(clientId, '').pk, ':prefix': keys.webhookPrefix() },
  });
  return items.map(({ id, clientId: client, url, events, secret, createdAt }) => ({ id, clientId: client, url, events, secret, createdAt })).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

export async function getWebhook(clientId: string, id: string): Promise<StoredWebhook | undefined> {
  const { Item } = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.webhook(clientId, id) }));
  return Item as StoredWebhook | undefined;
}

/** Deletes one of the client's webhooks; UnknownWebhookError when it has none with this id. */
export async function deleteWebhook(clientId: string, id: string): Promise<void> {
  try {
    await ddb.send(new DeleteCommand({ TableName: tableName(), Key: keys.webhook(clientId, id), ConditionExpression: 'attribute_exists(pk)' }));
  } catch (err) {
    if (isConditionFailure(err)) throw new UnknownWebhookError(id);
    throw err;
  }
}
