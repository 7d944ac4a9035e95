/**
 * A client's link secret (shared/readers/links.ts), kept on the client item:
 * made the first time a link is needed; rotated by the admin CLI, the
 * previous secret still accepted for a grace period (links already mailed
 * keep working), then refused.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newSecret } from '../auth/secrets.js';
import { ddb, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import type { LinkSecrets } from './links.js';

/** Days the previous secret's links keep working after a rotation, by default (RFC 8058 senders expect 30 days and more). */
export const DEFAULT_GRACE_DAYS = 60;

export interface SecretFields {
  linkSecret?: string;
  previousLinkSecret?: string;
  previousLinkSecretUntil?: number;
}

export const toSecrets = (item: SecretFields & { linkSecret: string }): LinkSecrets => ({
  current: item.linkSecret,
  previous: item.previousLinkSecret,
  previousUntil: item.previousLinkSecretUntil,
});

/**
 * The client's link secrets; undefined for an unknown client. With `create`
 * (listings, the admin CLI) a client without one gets its first secret now;
 * without (the reader pages: a GET changes nothing) such a client has no valid link.
 */
export async function linkSecretsOf(clientId: string, { create = true } = {}): Promise<LinkSecrets | undefined> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.client(clientId) }));
  const item = out.Item as (SecretFields & { id?: string }) | undefined;
  if (!item) return undefined;
  if (item.linkSecret) return toSecrets(item as SecretFields & { linkSecret: string });
  if (!create) return undefined;
  // First link of this client: one secret, whoever asks first (a concurrent caller reads the winner's).
  const made = await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(clientId),
      UpdateExpression: 'SET linkSecret = if_not_exists(linkSecret, :s)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':s': newSecret() },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return toSecrets(made.Attributes as SecretFields & { linkSecret: string });
}

/**
 * Replaces the current secret; the old one keeps working for `graceDays`
 * (0: at once refused). A secret older than that is dropped.
 */
export async function rotateLinkSecret(clientId: string, graceDays = DEFAULT_GRACE_DAYS, now = Date.now()): Promise<LinkSecrets & { current: string }> {
  const before = await linkSecretsOf(clientId);
  if (!before) throw new Error(`unknown client ${clientId}`);
  const next = newSecret();
  const until = now + graceDays * 86_400_000;
  const out = await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(clientId),
      UpdateExpression: 'SET linkSecret = :next, previousLinkSecret = :prev, previousLinkSecretUntil = :until',
      // A concurrent rotation: one of them wins; the other fails rather than dropping the winner's secret unseen.
      ConditionExpression: 'linkSecret = :prev',
      ExpressionAttributeValues: { ':next': next, ':prev': before.current, ':until': until },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return toSecrets(out.Attributes as SecretFields & { linkSecret: string });
}
