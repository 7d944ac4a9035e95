/**
 * Checking a reader link: rate limits, then the token against the client's
 * link secrets (shared/readers/links.ts). No subscriber is read before the
 * token checks; nothing is written (a GET changes nothing).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { enforceReaderLimits, type ReaderUse } from '../ratelimit/limits.js';
import { toSecrets, type SecretFields } from './link-secret.js';
import { decodeAddress, verifyLinkToken, type LinkSecrets, type LinkTarget } from './links.js';

export interface CheckedLink<T extends LinkTarget> {
  target: T;
  secrets: LinkSecrets;
  /** Lists of the client's global opt-in forms (shown in the preference centre). */
  globalFormLists: number[];
}

/**
 * The link's target when its token is right (current secret, or the previous
 * one within its grace period); undefined for any tampered or unknown link.
 * Throws RateLimitedError beyond the reader limits of `use` (a page, or a change).
 */
export async function checkLink<K extends LinkTarget['kind']>(
  kind: K,
  p: { client_id: string; list_id?: string; address: string; token: string },
  sourceIp: string,
  use: ReaderUse,
): Promise<CheckedLink<Extract<LinkTarget, { kind: K }>> | undefined> {
  if (!/^[a-z0-9][a-z0-9_-]{1,62}$/.test(p.client_id)) return undefined;
  await enforceReaderLimits(p.client_id, sourceIp, false, use);
  const email = decodeAddress(p.address);
  const listId = kind === 'unsubscribe' && /^[1-9]\d{0,9}$/.test(p.list_id ?? '') ? Number(p.list_id) : undefined;
  if (!email || (kind === 'unsubscribe' && listId === undefined)) return undefined;
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.client(p.client_id) }));
  const item = out.Item as (SecretFields & { globalFormLists?: Set<number> | number[] }) | undefined;
  if (!item?.linkSecret) return undefined;
  const target = (kind === 'unsubscribe' ? { kind, clientId: p.client_id, listId: listId!, email } : { kind, clientId: p.client_id, email }) as Extract<LinkTarget, { kind: K }>;
  const secrets = toSecrets(item as SecretFields & { linkSecret: string });
  if (!verifyLinkToken(secrets, target, p.token)) return undefined;
  await enforceReaderLimits(p.client_id, sourceIp, true, use);
  return { target, secrets, globalFormLists: [...(item.globalFormLists ?? [])].map(Number) };
}
