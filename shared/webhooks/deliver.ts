/**
 * Webhook deliveries: one endpoint's events of one write, POSTed in order, signed per Standard Webhooks, through the
 * SSRF-safe fetch; on the first failure the rest wait for the next retry, then the dead-letter queue. Fair per client:
 * an SQS fair queue, and no POST starts after `sliceMs` (what is left goes back to the queue).
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

/** What one message's delivery left: the failure its webhook answered, if any. */
async function deliverMessage(
  message: DeliveryMessage,
  hookOf: (m: DeliveryMessage) => Promise<StoredWebhook | undefined>,
  deadline: number,
  earlierFailure: string | undefined,
): Promise<string | undefined> {
  const wait = (message.notBefore ?? 0) - Date.now();
  if (wait > 1000) {
    await sendDelivery(webhookSettings.queueUrl, message, wait / 1000);
    return undefined;
  }
  const hook = await hookOf(message);
  if (!hook) {
    logger.info('webhook deleted: deliveries dropped', { webhookId: message.webhookId, events: message.events.length });
    return undefined;
  }
  // The receiver just failed in this batch: trying it again now would likely hold the slot one more timeout.
  if (earlierFailure !== undefined) {
    await retryLater(hook, message, message.events, earlierFailure);
    return earlierFailure;
  }
  for (let i = 0; i < message.events.length; i++) {
    if (Date.now() >= deadline) {
      count('WebhookDeliveriesRequeued');
      await sendDelivery(webhookSettings.queueUrl, { ...message, events: message.events.slice(i) });
      return undefined;
    }
    const failure = await postEvent(hook, message.events[i]);
    if (failure === undefined) {
      count('WebhooksDelivered');
      continue;
    }
    count('WebhookDeliveryFailures');
    await retryLater(hook, message, message.events.slice(i), failure);
    return failure;
  }
  return undefined;
}

/** Queues the events for the next retry of the schedule, or dead-letters them after the last. */
async function retryLater(hook: StoredWebhook, message: DeliveryMessage, events: DeliveryMessage['events'], failure: string): Promise<void> {
  const delays = webhookSettings.retryDelays;
  const rest: DeliveryMessage = { ...message, events, lastError: failure };
  if (message.attempt >= delays.length) {
    logger.warn('webhook deliveries dead-lettered', { webhookId: hook.id, events: rest.events.length, attempts: message.attempt + 1, lastError: failure });
    count('WebhooksDeadLettered', rest.events.length);
    return sendDelivery(webhookSettings.deadLetterQueueUrl, rest);
  }
  const delay = delays[message.attempt];
  logger.info('webhook delivery failed: retried later', { webhookId: hook.id, attempt: message.attempt + 1, retryInSeconds: delay, lastError: failure });
  return sendDelivery(webhookSettings.queueUrl, { ...rest, attempt: message.attempt + 1, notBefore: Date.now() + delay * 1000 }, delay);
}

/** The delivery job: a batch of delivery messages; one whose retry could not be queued comes back (partial batch response). */
export async function deliverWebhooks(event: unknown): Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }> {
  const deadline = Date.now() + webhookSettings.sliceMs;
  const hooks = new Map<string, Promise<StoredWebhook | undefined>>();
  const hookOf = (m: DeliveryMessage) => {
    const id = `${m.clientId}\u0000${m.webhookId}`;
    let found = hooks.get(id);
    if (!found) hooks.set(id, (found = getWebhook(m.clientId, m.webhookId)));
    return found;
  };
  const batchItemFailures: Array<{ itemIdentifier: string }> = [];
  // Per webhook, its messages in the batch's order.
  const perHook = new Map<string, Array<{ messageId: string; message: DeliveryMessage }>>();
  for (const record of sqsRecords(event)) {
    try {
      const message = JSON.parse(record.body) as DeliveryMessage;
      const id = `${message.clientId}\u0000${message.webhookId}`;
      perHook.set(id, [...(perHook.get(id) ?? []), { messageId: record.messageId, message }]);
    } catch (err) {
      logger.error('webhook delivery message failed', { error: err as Error, messageId: record.messageId });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  await Promise.all(
    [...perHook.values()].map(async (messages) => {
      let failure: string | undefined;
      for (const { messageId, message } of messages) {
        try {
          failure = (await deliverMessage(message, hookOf, deadline, failure)) ?? failure;
        } catch (err) {
          logger.error('webhook delivery message failed', { error: err as Error, messageId });
          batchItemFailures.push({ itemIdentifier: messageId });
        }
      }
    }),
  );
  return { batchItemFailures };
}
