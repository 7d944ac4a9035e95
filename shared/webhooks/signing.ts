/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the
 * secret is `whsec_` + base64 of random bytes; a delivery carries
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature:
 * v1,<base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret's bytes>`.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: 32 random bytes (the specification asks for 24 to 64). */
export function newSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The `webhook-signature` value of one delivery attempt. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers of one delivery attempt (the timestamp is the attempt's; the id stays the same across retries). */
export function signedHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(secret, id, timestamp, body) };
}
