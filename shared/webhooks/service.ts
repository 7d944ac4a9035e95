/**
 * Registering webhooks (POST/GET/DELETE /v1/webhooks): the caller's own
 * only. The URL is checked as the SSRF-safe fetch checks it (shared/net),
 * here and again on every delivery at connect time.
 */
import { randomBytes } from 'node:crypto';
import { backoffMs, isTransactionConflict, sleep } from '../db/client.js';
import { checkUrl, guardedLookup, UrlFetchError } from '../net/safe-fetch.js';
import { WebhookLimitError } from './errors.js';
import type { WebhookBodyInput, WebhookOutput } from './schemas.js';
import { webhookSettings } from './settings.js';
import { newSecret } from './signing.js';
import { deleteWebhook, putWebhook, webhookSetVersion, webhooksOf, type StoredWebhook } from './store.js';

/** The cause of every refused webhook address (private, loopback, link-local, metadata…). */
export const WEBHOOK_NOT_ALLOWED = 'the address is not allowed: webhooks go to public https addresses only';

const view = ({ id, url, events, createdAt }: StoredWebhook): WebhookOutput => ({ id, url, events, created_at: createdAt });

/** Resolves the host with the fetch's guarded lookup: a name with any refused address is refused; a name that does not resolve (yet) is checked at delivery. */
function checkHost(hostname: string, allowLoopback: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    guardedLookup(allowLoopback)(hostname, { all: true }, (err) => {
      if (err instanceof UrlFetchError) return reject(new UrlFetchError(WEBHOOK_NOT_ALLOWED, err.detail));
      resolve();
    });
  });
}

/** Checks a webhook URL: https (http only where loopback is allowed, locally), no credentials, a public address. */
export async function checkWebhookUrl(raw: string): Promise<URL> {
  const allowLoopback = webhookSettings.allowLoopback;
  let url: URL;
  try {
    url = checkUrl(raw, { allowLoopback });
  } catch (err) {
    if (err instanceof UrlFetchError && err.detail) throw new UrlFetchError(WEBHOOK_NOT_ALLOWED, err.detail);
    throw err;
  }
  if (url.protocol !== 'https:' && !allowLoopback) throw new UrlFetchError('webhook URLs must be https');
  if (!/^\[|^[\d.]+$/.test(url.hostname)) await checkHost(url.hostname, allowLoopback);
  return url;
}

/** Rounds a registration may lose to others that race it (each round one of them commits). */
const MAX_REGISTRATION_ATTEMPTS = 25;

/** Registers a webhook; answers it with its secret (the only time the secret is shown). */
export async function createWebhook(clientId: string, input: WebhookBodyInput): Promise<WebhookOutput & { secret: string }> {
  const url = await checkWebhookUrl(input.url);
  const limit = webhookSettings.maxPerClient;
  const hook: StoredWebhook = { id: `wh_${randomBytes(12).toString('hex')}`, clientId, url: url.href, events: input.events, secret: newSecret(), createdAt: new Date().toISOString() };
  // Counted and written against the set's version (read first, both strongly consistent): of registrations that race, one
  // commits per round and the others count again, so the limit holds (a deletion only makes a count too high, never too low).
  for (let attempt = 0; ; attempt++) {
    const version = await webhookSetVersion(clientId);
    if ((await webhooksOf(clientId, { consistent: true })).length >= limit) throw new WebhookLimitError(limit);
    try {
      await putWebhook(hook, version);
      return { ...view(hook), secret: hook.secret };
    } catch (err) {
      if (!isTransactionConflict(err) || attempt >= MAX_REGISTRATION_ATTEMPTS) throw err;
      await sleep(backoffMs(attempt));
    }
  }
}

export async function listWebhooks(clientId: string): Promise<WebhookOutput[]> {
  return (await webhooksOf(clientId)).map(view);
}

export { deleteWebhook };
