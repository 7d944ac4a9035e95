/**
 * Webhook deliveries: one message holds one endpoint's events of one write;
 * they are POSTed one after the other (in order), each signed per Standard
 * Webhooks, through the SSRF-safe fetch. At the first failure (non-2xx,
 * timeout, refused address) the rest wait for the next retry
 * (webhookSettings.retryDelays); after the last one they go to the
 * dead-letter queue (alarmed). The webhook-id is the event's id on every
 * attempt.
 */
import { count, logger } from '../observability/index.js';
import { safeFetch, UrlFetchError } from '../net/safe-fetch.js';
import { sqsRecords } from '../queue.js';
import type { ChangeEvent } from './changes.js';
import { sendDelivery, type DeliveryMessage } from './queue.js';
import { webhookSettings } from './settings.js';
import { signedHeaders } from './signing.js';
import { getWebhook, type StoredWebhook } from './store.js';

/** Answers read from a receiver at most (the body is not used). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** POSTs one event; resolves with why it failed, or undefined when the receiver answered 2xx. */
export async function postEvent(hook: Pick<StoredWebhook, 'url' | 'secret'>, change: ChangeEvent, now = Date.now()): Promise<string | undefined> {
  const body = JSON.stringify(change);
  try {
    const answer = await safeFetch(hook.url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', accept: '*/*', 'user-agent': 'newsletter-service-webhooks/1', ...signedHeaders(hook.secret, change.id, body, now) },
      allowLoopback: webhookSettings.allowLoopback,
      maxBytes: MAX_ANSWER_BYTES,
      timeoutMs: webhookSettings.timeoutMs,
      connectTimeoutMs: webhookSettings.timeoutMs,
      maxRedirects: 0,
      sizeLimitName: 'the webhook answer limit',
    });
    answer.body.resume();
    answer.body.on('error', () => undefined);
    return undefined;
  } catch (err) {
    if (err instanceof UrlFetchError) return err.detail ?? err.message;
    return (err as Error).message;
  }
}

async function deliverMessage(message: DeliveryMessage, hookOf: (m: DeliveryMessage) => Promise<StoredWebhook | undefined>): Promise<void> {
  const wait = (message.notBefore ?? 0) - Date.now();
  if (wait > 1000) return sendDelivery(webhookSettings.queueUrl, message, wait / 1000);
  const hook = await hookOf(message);
  if (!hook) {
    logger.info('webhook deleted: deliveries dropped', { webhookId: message.webhookId, events: message.events.length });
    return;
  }
  for (let i = 0; i < message.events.length; i++) {
    const failure = await postEvent(hook, message.events[i]);
    if (failure === undefined) {
      count('WebhooksDelivered');
      continue;
    }
    count('WebhookDeliveryFailures');
    const delays = webhookSettings.retryDelays;
    const rest: DeliveryMessage = { ...message, events: message.events.slice(i), lastError: failure };
    if (message.attempt >= delays.length) {
      logger.warn('webhook deliveries dead-lettered', { webhookId: hook.id, events: rest.events.length, attempts: message.attempt + 1, lastError: failure });
      count('WebhooksDeadLettered', rest.events.length);
      return sendDelivery(webhookSettings.deadLetterQueueUrl, rest);
    }
    const delay = delays[message.attempt];
    logger.info('webhook delivery failed: retried later', { webhookId: hook.id, attempt: message.attempt + 1, retryInSeconds: delay, lastError: failure });
    return sendDelivery(webhookSettings.queueUrl, { ...rest, attempt: message.attempt + 1, notBefore: Date.now() + delay * 1000 }, delay);
  }
}

/** The delivery job: a batch of delivery messages; one whose retry could not be queued comes back (partial batch response). */
export async function deliverWebhooks(event: unknown): Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }> {
  const hooks = new Map<string, Promise<StoredWebhook | undefined>>();
  const hookOf = (m: DeliveryMessage) => {
    const id = `${m.clientId}\u0000${m.webhookId}`;
    let found = hooks.get(id);
    if (!found) hooks.set(id, (found = getWebhook(m.clientId, m.webhookId)));
    return found;
  };
  const batchItemFailures: Array<{ itemIdentifier: string }> = [];
  await Promise.all(
    sqsRecords(event).map(async (record) => {
      try {
        await deliverMessage(JSON.parse(record.body) as DeliveryMessage, hookOf);
      } catch (err) {
        logger.error('webhook delivery message failed', { error: err as Error, messageId: record.messageId });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures };
}
