import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Client } from '../clients/clients.js';
import { RateLimitedError } from './errors.js';
import { DEFAULT_SUBSCRIBE_LIMITS, LOGIN_LIMITS, READER_CHANGE_LIMITS, READER_PAGE_LIMITS } from './policy.js';
import { consume, release } from './ratelimit.js';

export { DEFAULT_SUBSCRIBE_LIMITS, LOGIN_LIMITS, READER_CHANGE_LIMITS, READER_PAGE_LIMITS } from './policy.js';

/** A client's limits: its overrides where they are valid numbers, else the spec's. */
export function subscribeLimits(overrides: Client['rateLimits']): { perIpPerMinute: number; perKeyPerMinute: number } {
  const pick = (value: unknown, fallback: number) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback);
  return {
    perIpPerMinute: pick(overrides?.perIpPerMinute, DEFAULT_SUBSCRIBE_LIMITS.perIpPerMinute),
    perKeyPerMinute: pick(overrides?.perKeyPerMinute, DEFAULT_SUBSCRIBE_LIMITS.perKeyPerMinute),
  };
}

/**
 * The identity an IP is counted under: IPv4 as is, IPv6 by its /64 prefix
 * (one subscriber line or host usually owns a whole /64).
 */
export function ipBucket(sourceIp: string): string {
  if (!ipaddr.isValid(sourceIp)) return sourceIp || 'unknown';
  const addr = ipaddr.process(sourceIp);
  if (addr.kind() === 'ipv4') return addr.toString();
  return `${(addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::/64`;
}

/**
 * Counts one subscribe request of a client: per source IP (scoped to the
 * client, so the limit is the client's own setting), then overall for the
 * client's tracking key. Throws RateLimitedError (with its retry time) beyond either.
 */
export async function enforceSubscribeLimits(clientId: string, sourceIp: string, overrides: Client['rateLimits'], nowMs = Date.now()): Promise<void> {
  const limits = subscribeLimits(overrides);
  const ip = await consume(`ip#${clientId}#${ipBucket(sourceIp)}`, limits.perIpPerMinute, nowMs);
  if (!ip.allowed) {
    throw new RateLimitedError('ip', ip.retryAfterSeconds, `Too many requests from this IP address: at most ${limits.perIpPerMinute} per minute; retry in ${ip.retryAfterSeconds} s`);
  }
  const key = await consume(`key#${clientId}`, limits.perKeyPerMinute, nowMs);
  if (!key.allowed) {
    throw new RateLimitedError('key', key.retryAfterSeconds, `Too many requests for this form: at most ${limits.perKeyPerMinute} per minute; retry in ${key.retryAfterSeconds} s`);
  }
}

/**
 * Reserves one login attempt for a name from a source address before any
 * key hashing: 429 with Retry-After when the window's failed attempts are
 * used up. The caller gives the attempt back (`succeeded`) when the key was
 * right, so only failures count.
 */
export async function reserveLoginAttempt(username: string, sourceIp: string, nowMs = Date.now()): Promise<{ succeeded: () => Promise<void> }> {
  const windowMs = LOGIN_LIMITS.windowMinutes * 60_000;
  const ip = ipBucket(sourceIp);
  const scopes = [`login#${ip}#${username.slice(0, 100)}`, `login#${ip}`];
  const byName = await consume(scopes[0], LOGIN_LIMITS.perNameAndIp, nowMs, windowMs);
  if (!byName.allowed) throw tooManyLogins(byName.retryAfterSeconds);
  const byIp = await consume(scopes[1], LOGIN_LIMITS.perIp, nowMs, windowMs);
  if (!byIp.allowed) {
    await release(scopes[0], nowMs, windowMs);
    throw tooManyLogins(byIp.retryAfterSeconds);
  }
  return { succeeded: async () => void (await Promise.all(scopes.map((scope) => release(scope, nowMs, windowMs)))) };
}

function tooManyLogins(retryAfterSeconds: number): RateLimitedError {
  return new RateLimitedError('login', retryAfterSeconds, `Too many failed logins from this address; retry in ${retryAfterSeconds} s`);
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** What a reader link request does: shows a page (GET) or changes subscriptions (POST); each has its own budget. */
export type ReaderUse = 'page' | 'change';

/**
 * Counts one reader link request (unsubscribe or preference link) of the
 * publisher the link names, in the budget of its use: per source address
 * (IPv6 by /64) before the link is checked (`link` undefined), then per link
 * (its checked token) once it checked, so one link replayed from many
 * addresses spends its own budget only. Throws RateLimitedError beyond either
 * (READER_PAGE_LIMITS, READER_CHANGE_LIMITS).
 */
export async function enforceReaderLimits(clientId: string, sourceIp: string, link: string | undefined, use: ReaderUse, nowMs = Date.now()): Promise<void> {
  const { perIpPerMinute, perLinkPerMinute } = use === 'page' ? READER_PAGE_LIMITS : READER_CHANGE_LIMITS;
  const prefix = use === 'page' ? 'reader' : 'reader-change';
  // The token's hash, not the token: the window items are no credential.
  const [scope, limit] = link !== undefined ? [`${prefix}-link#${clientId}#${sha256(link).slice(0, 32)}`, perLinkPerMinute] : [`${prefix}-ip#${clientId}#${ipBucket(sourceIp)}`, perIpPerMinute];
  const window = await consume(scope, limit, nowMs);
  if (!window.allowed) {
    const from = link !== undefined ? ' for this link' : ' from this IP address';
    throw new RateLimitedError(link !== undefined ? 'key' : 'ip', window.retryAfterSeconds, `Too many requests${from}: at most ${limit} per minute; retry in ${window.retryAfterSeconds} s`);
  }
}
