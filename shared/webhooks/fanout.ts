/**
 * The change feed, off the request path: for each raw event object S3 notifies, puts its subscriber changes on the
 * EventBridge bus and queues one delivery message per webhook that wants them. The import worker's results arrive
 * on the same queue (its onSuccess destination) and become `import.finished`.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { logger, count } from '../observability/index.js';
import { sqsRecords } from '../queue.js';
import { s3 } from '../s3.js';
import { putChanges } from './bus.js';
import { changesOfRaw, changeSource, directChange, type ChangeEvent } from './changes.js';
import { readFile, toImportedFile } from '../imports/files.js';
import { fileOfKey } from '../imports/objects.js';
import { EVENTS_PER_MESSAGE, sendDeliveries, type DeliveryMessage } from './queue.js';
import { webhookSettings } from './settings.js';
import { webhooksOf, type StoredWebhook } from './store.js';

interface S3Notification {
  Records?: Array<{ eventName?: string; s3?: { bucket?: { name?: string }; object?: { key?: string } } }>;
}

/** What Lambda's onSuccess destination sends: the import worker's (or its failure job's) S3 event and answer. */
interface SuccessRecord {
  requestContext?: { condition?: string };
  responsePayload?: Array<{ key?: string; outcome?: string; failed?: boolean }> | null;
}

/** The files an import run ended (done or failed), from its success record; a paused or busy run ends nothing. */
export function finishedImports(record: SuccessRecord): Array<{ clientId: string; fileId: number }> {
  if (record.requestContext?.condition !== 'Success' || !Array.isArray(record.responsePayload)) return [];
  return record.responsePayload.flatMap((r) => {
    const ended = r.outcome === 'done' || r.outcome === 'failed' || r.failed === true;
    const file = ended && typeof r.key === 'string' ? fileOfKey(r.key) : undefined;
    return file ? [file] : [];
  });
}

/** `import.finished` of each file an import run ended; its id derives from the file, so a repeated record repeats the id. */
async function publishFinishedImports(record: SuccessRecord): Promise<void> {
  for (const { clientId, fileId } of finishedImports(record)) {
    const item = await readFile(clientId, fileId);
    if (!item || (item.status !== 'done' && item.status !== 'failed')) continue;
    const file = toImportedFile(item);
    const { lines_read, created, subscribed, unsubscribed, errors, unsubscribed_absent } = file.progress;
    const data: Record<string, string | number> = { file_id: file.id, status: file.status, lines_read, created, subscribed, unsubscribed, errors, unsubscribed_absent };
    if (file.failure_cause) data.failure_cause = file.failure_cause;
    const change = directChange(clientId, 'import.finished', String(fileId), { time: file.finished_at ?? file.updated_at, list_id: file.email_list_id, source: 'imports', data });
    await publishChanges(clientId, [change]);
  }
}

/** The delivery messages of some changes: per webhook, its types only, in order, EVENTS_PER_MESSAGE per message. */
export function deliveriesOf(hooks: StoredWebhook[], changes: ChangeEvent[], now = Date.now()): DeliveryMessage[] {
  const messages: DeliveryMessage[] = [];
  for (const hook of hooks) {
    const wanted = changes.filter((c) => hook.events.includes(c.type));
    for (let at = 0; at < wanted.length; at += EVENTS_PER_MESSAGE) {
      messages.push({ webhookId: hook.id, clientId: hook.clientId, events: wanted.slice(at, at + EVENTS_PER_MESSAGE), attempt: 0, firstAt: now });
    }
  }
  return messages;
}

/** Puts changes on the bus (when there is one) and queues their deliveries. */
export async function publishChanges(clientId: string, changes: ChangeEvent[], hooks?: StoredWebhook[]): Promise<void> {
  if (changes.length === 0) return;
  const bus = webhookSettings.eventBusName;
  if (bus) await putChanges(bus, changes);
  const messages = deliveriesOf(hooks ?? (await webhooksOf(clientId)), changes);
  if (messages.length > 0) await sendDeliveries(webhookSettings.queueUrl, messages);
  count('ChangeEventsPublished', changes.length);
}

/** One S3 notification: each created raw object of subscriber changes, read and published (unless nobody would receive it). */
async function fanOutNotification(body: string, hooksOf: (clientId: string) => Promise<StoredWebhook[]>): Promise<void> {
  const notification = JSON.parse(body) as S3Notification & SuccessRecord;
  if (notification.requestContext) return publishFinishedImports(notification);
  for (const record of notification.Records ?? []) {
    if (!record.eventName?.startsWith('ObjectCreated') || !record.s3?.object?.key || !record.s3.bucket?.name) continue;
    // S3 notifications carry keys URL-encoded, spaces as `+`.
    const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
    const source = changeSource(key);
    if (!source) continue;
    const hooks = await hooksOf(source.clientId);
    if (hooks.length === 0 && !webhookSettings.eventBusName) continue;
    const object = await s3.send(new GetObjectCommand({ Bucket: record.s3.bucket.name, Key: key }));
    const text = (await object.Body?.transformToString('utf8')) ?? '';
    await publishChanges(source.clientId, changesOfRaw(key, text), hooks);
  }
}

/** The fan-out job: a batch of S3 notifications from the changes queue; a notification that fails comes back (partial batch response). */
export async function fanOutChanges(event: unknown): Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }> {
  const hooks = new Map<string, Promise<StoredWebhook[]>>();
  const hooksOf = (clientId: string) => {
    let found = hooks.get(clientId);
    if (!found) hooks.set(clientId, (found = webhooksOf(clientId)));
    return found;
  };
  const batchItemFailures: Array<{ itemIdentifier: string }> = [];
  await Promise.all(
    sqsRecords(event).map(async (record) => {
      try {
        await fanOutNotification(record.body, hooksOf);
      } catch (err) {
        logger.error('change notification not published', { error: err as Error, messageId: record.messageId });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures };
}
