import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { TokenError } from './errors.js';
import { sha256 } from './secrets.js';

/**
 * Resolves the client of a token from the `X-Service-Client-Token` header.
 * Missing, unknown and expired tokens are 401s (spec §5.3), and so are
 * tokens issued before the client's API key was last rotated (the client's
 * key generation is read strongly consistent, so a rotation takes effect at
 * once). Token routes hand
 * it to `httpHandler`; it lives apart from token issuing so they load only
 * this and the table client, not the clients and lists code.
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
