import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ListOutput } from './schemas.js';
import { ddb, queryAll, tableName } from '../db/client.js';
import { keys, listIdFromSortKey } from '../db/keys.js';
import { UnknownListError } from './errors.js';

interface ListItem {
  sk: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

function toList(item: ListItem): ListOutput {
  return { id: listIdFromSortKey(item.sk), name: item.name, created_at: item.createdAt, updated_at: item.updatedAt };
}

/** Allocates the next id of a per-client sequence atomically (1, 2, 3, …). */
export async function nextId(clientId: string, sequence: 'list' | 'file'): Promise<number> {
  const out = await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.counter(clientId, sequence),
      UpdateExpression: 'ADD #v :one',
      ExpressionAttributeNames: { '#v': 'value' },
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return out.Attributes!.value as number;
}

/** Creates a list with the next list id of the client. */
export async function createList(clientId: string, name: string): Promise<ListOutput> {
  const id = await nextId(clientId, 'list');
  const now = new Date().toISOString();
  const item = { ...keys.list(clientId, id), type: 'list', clientId, name, createdAt: now, updatedAt: now };
  await ddb.send(new PutCommand({ TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  return toList(item);
}

/** All lists of a client, by id (spec 4.5). */
export async function listLists(clientId: string): Promise<ListOutput[]> {
  const items = await queryAll<ListItem>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.client(clientId).pk, ':prefix': keys.listPrefix() },
  });
  return items.map(toList);
}

/** A list of the client; UnknownListError when it does not exist or belongs to another client. */
export async function getList(clientId: string, listId: number): Promise<ListOutput> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.list(clientId, listId) }));
  if (!out.Item) throw new UnknownListError(clientId, listId);
  return toList(out.Item as ListItem);
}
