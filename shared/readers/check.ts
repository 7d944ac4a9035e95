/**
 * Checking a reader link: rate limits, then the token against the client's
 * link secrets (shared/readers/links.ts). No subscriber is read before the
 * token checks; nothing is written (a GET changes nothing).
 *
 * The secrets are read from the client item once per container and kept
 * LINK_SECRET_CACHE_SECONDS: a link checks with no database read. A token
 * that fails against a kept copy is checked once more against the client
 * item, so a link made with a secret rotated in since works at once; the
 * other way round, a rotation ends the old links in every container within
 * LINK_SECRET_CACHE_SECONDS (docs/api.md, "Rotation").
 */
import { enforceReaderLimits, type ReaderUse } from '../ratelimit/limits.js';
import { monotonicMs, TtlCache } from '../ttl-cache.js';
import { linkSecretsOf } from './link-secret.js';
import { decodeAddress, verifyLinkToken, type LinkSecrets, type LinkTarget } from './links.js';

/** How long a container keeps a client's link secrets: the longest an old link works on after a rotation ends it. */
export const LINK_SECRET_CACHE_SECONDS = 60;

/** Per client, its secrets as last read (null: no such client, or no secret yet), for LINK_SECRET_CACHE_SECONDS of the container's life. */
const secretsRead = new TtlCache<LinkSecrets | null>(10_000, LINK_SECRET_CACHE_SECONDS * 1000, monotonicMs);

/** Reads the client's secrets (none made here: a GET changes nothing) and keeps them. */
async function readSecrets(clientId: string): Promise<LinkSecrets | null> {
  const secrets = (await linkSecretsOf(clientId, { create: false })) ?? null;
  secretsRead.set(clientId, secrets);
  return secrets;
}

export interface CheckedLink<T extends LinkTarget> {
  target: T;
  secrets: LinkSecrets;
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
  await enforceReaderLimits(p.client_id, sourceIp, undefined, use);
  const email = decodeAddress(p.address);
  const listId = kind === 'unsubscribe' && /^[1-9]\d{0,9}$/.test(p.list_id ?? '') ? Number(p.list_id) : undefined;
  if (!email || (kind === 'unsubscribe' && listId === undefined)) return undefined;
  const target = (kind === 'unsubscribe' ? { kind, clientId: p.client_id, listId: listId!, email } : { kind, clientId: p.client_id, email }) as Extract<LinkTarget, { kind: K }>;
  const verifies = (s: LinkSecrets | null): s is LinkSecrets => s !== null && verifyLinkToken(s, target, p.token);
  const kept = secretsRead.entry(p.client_id);
  let secrets = kept ? kept.value : await readSecrets(p.client_id);
  // A failure against a kept copy: the secret may have been rotated since (the link is new), so read it once.
  if (!verifies(secrets) && kept) secrets = await readSecrets(p.client_id);
  if (!verifies(secrets)) return undefined;
  await enforceReaderLimits(p.client_id, sourceIp, p.token, use);
  return { target, secrets };
}
