/**
 * Reader links (unsubscribe, preferences): an HMAC-SHA256 token under the
 * client's link secret, bound to the client, the list (unsubscribe) and the
 * address. Pure: no I/O, so a link is checked before anything is read, and a
 * sending system computes the same links offline (docs/api.md, "Reader links").
 *
 *   unsubscribe message: `unsubscribe\n<client>\n<list id>\n<address>`
 *   preferences message: `preferences\n<client>\n<address>`
 *   token: base64url (no padding) of HMAC-SHA256(link secret, message as UTF-8)
 *   address in the path: base64url (no padding) of the address as stored (trimmed, lower-case)
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A client's link secrets: the current one, and the one before it while its grace period lasts. */
export interface LinkSecrets {
  current: string;
  previous?: string;
  /** Epoch ms until which links made with `previous` still work. */
  previousUntil?: number;
}

export type LinkTarget = { kind: 'unsubscribe'; clientId: string; listId: number; email: string } | { kind: 'preferences'; clientId: string; email: string };

/** The message a token signs (see the module comment). */
export function linkMessage(target: LinkTarget): string {
  return target.kind === 'unsubscribe' ? `unsubscribe\n${target.clientId}\n${target.listId}\n${target.email}` : `preferences\n${target.clientId}\n${target.email}`;
}

/** The token of a link under one secret. */
export function linkToken(secret: string, target: LinkTarget): string {
  return createHmac('sha256', secret).update(linkMessage(target), 'utf8').digest('base64url');
}

const encodeAddress = (email: string) => Buffer.from(email, 'utf8').toString('base64url');

/** The address a link's path carries, or undefined when it is not base64url of an address. */
export function decodeAddress(encoded: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(encoded)) return undefined;
  const email = Buffer.from(encoded, 'base64url').toString('utf8');
  return email.includes('@') && encodeAddress(email) === encoded ? email : undefined;
}

/** The absolute URL of a link (under PUBLIC_BASE_URL), made with the current secret. */
export function linkUrl(baseUrl: string, secrets: LinkSecrets, target: LinkTarget): string {
  const token = linkToken(secrets.current, target);
  const address = encodeAddress(target.email);
  const client = encodeURIComponent(target.clientId);
  return target.kind === 'unsubscribe'
    ? `${baseUrl}/v1/readers/unsubscribe/${client}/${target.listId}/${address}/${token}`
    : `${baseUrl}/v1/readers/preferences/${client}/${address}/${token}`;
}

/**
 * True when `token` is the link's token under the current secret, or under
 * the previous one before its grace period ended. Constant-time comparison.
 */
export function verifyLinkToken(secrets: LinkSecrets, target: LinkTarget, token: string, now = Date.now()): boolean {
  const given = Buffer.from(token, 'utf8');
  const matches = (secret: string) => {
    const expected = Buffer.from(linkToken(secret, target), 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (matches(secrets.current)) return true;
  return secrets.previous !== undefined && (secrets.previousUntil ?? 0) > now && matches(secrets.previous);
}
