import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { TokenError } from './errors.js';
import { sha256 } from './secrets.js';

/**
 * Resolves the client of the `X-Service-Client-Token` header; missing, unknown, expired and pre-rotation tokens are
 * 401s (spec §5.3; the key generation is read strongly consistent). Apart from token issuing, so token routes load
 * only this and the table client.
 */
export async function authenticateToken(token: string | undefined, now = Date.now()): Promise<string> {
  if (!token) throw new TokenError('missing', 'Missing X-Service-Client-Token header');
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.token(sha256(token)) }));
  const item = out.Item;
  if (!item) throw new TokenError('unknown', 'Unknown token; request a new one from /v1/token');
  if (typeof item.expiresAt !== 'number' || item.expiresAt <= now) {
    throw new TokenError('expired', 'Token expired; request a new one from /v1/token');
  }
  const client = await ddb.send(
    new GetCommand({ TableName: tableName(), Key: keys.client(item.clientId as string), ConsistentRead: true, ProjectionExpression: 'pk, keyGeneration' }),
  );
  if (!client.Item || (client.Item.keyGeneration ?? 0) !== (item.keyGeneration ?? 0)) {
    throw new TokenError('revoked', 'Token revoked: the API key it was issued with has been replaced; request a new one from /v1/token');
  }
  return item.clientId as string;
}
