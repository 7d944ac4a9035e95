import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { ddb, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import * as v from 'valibot';
import { getClient, UsernameSchema } from '../clients/clients.js';
import { reserveLoginAttempt } from '../ratelimit/limits.js';
import { BadCredentialsError } from './errors.js';
import { decoyApiKeyHash, newSecret, sha256, verifyApiKey } from './secrets.js';

export const BAD_CREDENTIALS = 'Invalid username or password';

/**
 * Exchanges a client name and API key for a temporary token (spec 4.4).
 * The same cause is given whether the name or the key is wrong, and an
 * unknown name costs the same scrypt work as a wrong key. Failed attempts
 * from the source address are limited (LOGIN_LIMITS) before any scrypt work.
 */
export async function issueToken(username: string, password: string, sourceIp: string, now = Date.now()): Promise<{ token: string; expiresAt: string }> {
  const attempt = await reserveLoginAttempt(username, sourceIp);
  // A name that cannot be a client name (too long for a key, say) is just another wrong name.
  const client = v.is(UsernameSchema, username) ? await getClient(username) : undefined;
  const ok = await verifyApiKey(password, client?.apiKeyHash ?? (await decoyApiKeyHash()));
  if (!client || !ok) throw new BadCredentialsError(username, BAD_CREDENTIALS);
  await attempt.succeeded();
  const token = newSecret();
  const expiresAtMs = now + config.tokenTtlSeconds * 1000;
  await ddb.send(
    new PutCommand({
      TableName: tableName(),
      // The key generation the key was checked against: a rotation after this revokes the token.
      Item: { ...keys.token(sha256(token)), type: 'token', clientId: client.id, keyGeneration: client.keyGeneration ?? 0, expiresAt: expiresAtMs, ttl: Math.ceil(expiresAtMs / 1000) },
    }),
  );
  return { token, expiresAt: new Date(expiresAtMs).toISOString() };
}
