/**
 * Page views off the request path: the tracking request queues each view as
 * one SQS message; the `trackingViews` job consumes them in batches
 * (`applyViewBatch`), so N views of one article in a batch are one update of it.
 */
import { config } from '../config.js';
import { count, logger } from '../observability/index.js';
import { sendMessage, sqsRecords } from '../queue.js';
import type { ViewBatchStore } from './port.js';
import type { PageView } from './tracking.js';
import { applyViewBatch, type BatchResult, type QueuedView } from './view-batch.js';

/** Message format version: a consumer refuses (dead-letters) versions it does not know. */
const VERSION = 1;

/** Queues one page view (one SQS SendMessage). */
export async function enqueueView(clientId: string, view: PageView, t: number): Promise<void> {
  await sendMessage(config.trackingQueueUrl, JSON.stringify({ v: VERSION, clientId, t, view }));
}

/** A queued view from a message body; undefined when it is not one. */
export function parseQueuedView(body: string): QueuedView | undefined {
  let parsed: { v?: unknown; clientId?: unknown; t?: unknown; view?: Partial<PageView> };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return undefined;
  }
  const view = parsed?.view;
  if (parsed?.v !== VERSION || typeof parsed.clientId !== 'string' || typeof parsed.t !== 'number' || !view || typeof view.userId !== 'string' || typeof view.url !== 'string') return undefined;
  return { clientId: parsed.clientId, t: parsed.t, view: view as PageView };
}

/**
 * The consumer: applies an SQS batch of page views and answers a partial
 * batch response. Redelivered: the views whose article update failed (none
 * of their effects was applied) and messages that are not page views (they
 * reach the dead-letter queue after maxReceiveCount).
 */
export async function consumeViews(store: ViewBatchStore, event: unknown): Promise<BatchResult & { batchItemFailures: Array<{ itemIdentifier: string }> }> {
  const records = sqsRecords(event);
  const views: Array<QueuedView & { id: string }> = [];
  const bad: string[] = [];
  for (const record of records) {
    const view = parseQueuedView(record.body);
    if (view) views.push({ ...view, id: record.messageId });
    else bad.push(record.messageId);
  }
  if (bad.length > 0) logger.error('messages that are not page views', { messageIds: bad.slice(0, 10), count: bad.length });
  const result = await applyViewBatch(store, views);
  count('PageViewsCounted', result.counted);
  if (result.failed.length > 0) logger.warn('article updates failed; SQS delivers those views again', { views: result.failed.length });
  if (result.popularFailures > 0) logger.warn('popular snapshot not rewritten; containers without their own copy query the popularity index', { clients: result.popularFailures });
  if (result.neighbourFailures > 0) logger.warn('neighbour snapshots not rewritten; requests on those pages read their neighbours themselves', { clients: result.neighbourFailures });
  if (result.lostEffects > 0) {
    count('PageViewEffectsLost', result.lostEffects);
    logger.error('reader, co-visit or fresh-list writes failed after the views were counted', { records: result.lostEffects });
  }
  return { ...result, batchItemFailures: [...result.failed, ...bad].map((itemIdentifier) => ({ itemIdentifier })) };
}
