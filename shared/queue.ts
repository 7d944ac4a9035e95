import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { captureClient } from './observability/index.js';
import { recordSdkCalls } from './recording.js';

/**
 * SQS client, created once per Lambda container. Endpoint comes from
 * AWS_ENDPOINT_URL_SQS (locally the queue of infra/local/queues.ts).
 * Pure: a bundle whose code never sends a message leaves the client out.
 */
export const sqs = /* @__PURE__ */ (() => {
  // No MD5 of each body and its check on the answer (TLS already protects it), and no logger middleware copying every
  // answer for a logger nobody configured: both show in a tracking request's CPU profile (bench:recos:tracking).
  const client = new SQSClient({ md5: false });
  client.middlewareStack.remove('loggerMiddleware');
  return captureClient(recordSdkCalls(client));
})();

/** Sends one message (one SQS call). */
export async function sendMessage(queueUrl: string, body: string): Promise<void> {
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
}

/** One record of an SQS event as Lambda's event source mapping delivers it (the fields the consumers read). */
export interface SqsRecord {
  messageId: string;
  body: string;
  attributes?: { ApproximateReceiveCount?: string; SentTimestamp?: string };
}

/** The records of an SQS event; anything else has none. */
export function sqsRecords(event: unknown): SqsRecord[] {
  const records = (event as { Records?: unknown })?.Records;
  if (!Array.isArray(records)) return [];
  return (records as Array<Partial<SqsRecord> | null | undefined>).filter((r): r is SqsRecord => typeof r?.messageId === 'string' && typeof r?.body === 'string');
}
