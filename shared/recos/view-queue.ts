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
import { applyViewBatch, emptyResult, type BatchDeadline, type BatchResult, type QueuedView } from './view-batch.js';
import { applyRecoCounts, groupRecoCounts, parseRecoCount, type RecoCount, type RecoCountStore } from './reco-counts.js';

/**
 * The deadline of a batch given its function's remaining time: article updates not started within a third of it
 * (less a reserve of a sixth, at least 5 s) are left for redelivery. The readers and co-visits of counted views are
 * always written: skipping them loses reads, and redelivering counted views counts them twice.
 */
export function batchDeadline(remainingMs: number, now: () => number = () => performance.now()): BatchDeadline {
  const start = now();
  const budget = remainingMs - Math.max(5_000, remainingMs / 6);
  return { now, articlesBy: start + budget / 3, effectsBy: Infinity };
}

/** Message format version: a consumer refuses (dead-letters) versions it does not know. */
const VERSION = 1;

/** Queues one page view (one SQS SendMessage). */
export async function enqueueView(clientId: string, view: PageView, t: number): Promise<void> {
  await sendMessage(config.trackingQueueUrl, JSON.stringify({ v: VERSION, clientId, t, view }));
}

/**
 * Queues what a recommendation answer or a followed redirect adds to its
 * block's daily counters (one SQS SendMessage; shared/recos/reco-counts.ts).
 */
export async function enqueueRecoCount(count: RecoCount): Promise<void> {
  const { clientId, t, ...rest } = count;
  await sendMessage(config.trackingQueueUrl, JSON.stringify({ v: VERSION, clientId, t, count: rest }));
}

type Parsed = { v?: unknown; clientId?: unknown; t?: unknown; view?: Partial<PageView>; count?: Partial<RecoCount> };

const parseBody = (body: string): Parsed | undefined => {
  try {
    return JSON.parse(body) as Parsed;
  } catch {
    return undefined;
  }
};

/** A queued view from a message body; undefined when it is not one. */
export function parseQueuedView(body: string): QueuedView | undefined {
  return queuedView(parseBody(body));
}

function queuedView(parsed: Parsed | undefined): QueuedView | undefined {
  const view = parsed?.view;
  if (!parsed || parsed.v !== VERSION || typeof parsed.clientId !== 'string' || typeof parsed.t !== 'number' || !view || typeof view.userId !== 'string' || typeof view.url !== 'string') return undefined;
  return { clientId: parsed.clientId, t: parsed.t, view: view as PageView };
}

/**
 * The consumer: applies an SQS batch of page views and recommendation counts (one UpdateItem per client, block,
 * variant and day) and answers a partial batch response: views and counts whose update failed, none of whose effects
 * applied, come back, as do unknown messages (dead-lettered after maxReceiveCount).
 */
export async function consumeViews(
  store: ViewBatchStore,
  event: unknown,
  countStore?: RecoCountStore,
  deadline?: BatchDeadline,
): Promise<BatchResult & { batchItemFailures: Array<{ itemIdentifier: string }>; recoCounts: number }> {
  const records = sqsRecords(event);
  const views: Array<QueuedView & { id: string }> = [];
  const counts: Array<RecoCount & { id: string }> = [];
  const bad: string[] = [];
  for (const record of records) {
    const parsed = parseBody(record.body);
    const view = queuedView(parsed);
    const c = !view && parsed?.v === VERSION && countStore ? parseRecoCount(parsed.clientId, parsed.t, parsed.count) : undefined;
    if (view) views.push({ ...view, id: record.messageId });
    else if (c) counts.push({ ...c, id: record.messageId });
    else bad.push(record.messageId);
  }
  if (bad.length > 0) logger.error('messages that are neither page views nor recommendation counts', { messageIds: bad.slice(0, 10), count: bad.length });
  const [result, countsFailed] = await Promise.all([
    // A throw of the views' path fails the views only: the counts beside them are applied once (their ADDs would land twice in a whole-batch redelivery).
    applyViewBatch(store, views, deadline).catch((err: unknown) => {
      if (counts.length === 0) throw err;
      logger.error('page-view batch failed; SQS delivers its views again', { error: err as Error, views: views.length });
      return { ...emptyResult(), failed: views.map((v) => v.id) };
    }),
    countStore && counts.length > 0 ? applyRecoCounts(countStore, groupRecoCounts(counts)) : [],
  ]);
  if (countsFailed.length > 0) logger.warn('recommendation counter updates failed; SQS delivers those counts again', { messages: countsFailed.length });
  count('PageViewsCounted', result.counted);
  if (result.deferred > 0) logger.warn('batch out of time: article updates not started; SQS delivers those views again', { views: result.deferred });
  if (result.failed.length > result.deferred) logger.warn('article updates failed; SQS delivers those views again', { views: result.failed.length - result.deferred });
  if (result.popularFailures > 0) logger.warn('popular snapshot not rewritten; containers without their own copy query the popularity index', { clients: result.popularFailures });
  if (result.neighbourFailures > 0) logger.warn('neighbour snapshots not rewritten; requests on those pages read their neighbours themselves', { clients: result.neighbourFailures });
  if (result.lostEffects > 0) {
    count('PageViewEffectsLost', result.lostEffects);
    logger.error('reader, co-visit or fresh-list writes failed after the views were counted', { records: result.lostEffects });
  }
  return { ...result, recoCounts: counts.length - countsFailed.length, batchItemFailures: [...result.failed, ...countsFailed, ...bad].map((itemIdentifier) => ({ itemIdentifier })) };
}
