/** The webhook delivery queue: what one message carries, and sending (with a delay) to it or to its dead-letter queue. */
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '../queue.js';
import type { ChangeEvent } from './changes.js';

/** One endpoint's events of one write, delivered in order; `attempt` 0 is the first. */
export interface DeliveryMessage {
  webhookId: string;
  clientId: string;
  events: ChangeEvent[];
  attempt: number;
  /** When the first attempt was queued (ms). */
  firstAt: number;
  /** Not to be tried before this (ms): a retry waits longer than SQS's 15-minute delay in hops. */
  notBefore?: number;
  /** Why the last attempt failed (status or network error, for the log and the dead-letter queue). */
  lastError?: string;
}

/** SQS's longest message delay. */
export const MAX_DELAY_SECONDS = 900;
/** Events per message: a message stays far below SQS's size limit. */
export const EVENTS_PER_MESSAGE = 25;

/**
 * Sends one message. Its MessageGroupId is the client: on a standard queue that makes SQS a fair queue, which
 * serves the clients with few messages in flight before one with many (infra/local/queues.ts does the same).
 */
export async function sendDelivery(queueUrl: string, message: DeliveryMessage, delaySeconds = 0): Promise<void> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: JSON.stringify(message),
      MessageGroupId: message.clientId,
      DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(delaySeconds))),
    }),
  );
}

/** Sends messages 10 per call (grouped by client, as sendDelivery); entries SQS failed are retried, then it throws. */
export async function sendDeliveries(queueUrl: string, messages: DeliveryMessage[]): Promise<void> {
  for (let at = 0; at < messages.length; at += 10) {
    let entries = messages.slice(at, at + 10).map((m, i) => ({ Id: String(i), MessageBody: JSON.stringify(m), MessageGroupId: m.clientId }));
    for (let attempt = 0; entries.length > 0; attempt++) {
      const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      const failed = new Set((out.Failed ?? []).map((f) => f.Id));
      if (failed.size === 0) break;
      if (attempt >= 3) throw new Error(`SQS refused ${failed.size} webhook deliveries`);
      entries = entries.filter((e) => failed.has(e.Id));
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
}
