/** Webhook endpoints of a client: one item each in the client's partition (`WEBHOOK#<id>`), with the signing secret. */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailure, queryAll, tableName } from '../db/client.js';
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

export async function putWebhook(hook: StoredWebhook): Promise<void> {
  await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...keys.webhook(hook.clientId, hook.id), ...hook }, ConditionExpression: 'attribute_not_exists(pk)' }));
}

/** The client's webhooks, oldest first (ids are not ordered: sorted by creation). */
export async function webhooksOf(clientId: string): Promise<StoredWebhook[]> {
  const items = await queryAll<StoredWebhook>({
    TableName: tableName(),
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
