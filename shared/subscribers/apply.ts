/**
 * The core of every subscriber write: lines applied in transactions with
 * exact counters, conflicts retried, storage faults classified. It hands the
 * events of state changes to a sink and stores none itself, so a path that
 * cannot change a subscription (the opt-in form's data update) does not
 * bundle the event store.
 */
import { backoffMs, faultDetail, isRetryableStorageFault, isTransactionConflict, runPool, sleep, tableName, transactWrite } from '../db/client.js';
import type { EventRecord } from '../events/types.js';
import { HttpError } from '../http/errors.js';
import { count, logger } from '../observability/index.js';
import { addDeltas, applyLine, buildReport, dedupeLines, zeroDeltas, type Outcome } from './rules.js';
import { counterUpdate, readSubscribers, toItem, type SubscriberItem } from './store.js';
import type { Report, ReportError, SubscriberLine } from './types.js';

/** Subscribers written per transaction; one more item moves a counter shard. */
export const LINES_PER_TRANSACTION = 99;
export const TRANSACTIONS_IN_FLIGHT = 8;
export const MAX_CONFLICT_RETRIES = 12;

/** A storage fault after part of a request was applied; the cause says how much. Retrying is safe. */
export class PartialWriteError extends HttpError {
  constructor(applied: number, total: number) {
    super(503, `Storage error after ${applied} of ${total} subscribers were applied; the rest were not. Retry the request: applying it again is safe.`, {
      'retry-after': '1',
    });
  }
}

/**
 * A storage error that a retry cannot cure (a value the table refuses, say):
 * a bug of the service. Logged with its detail; the caller gets a generic 500
 * that still says how much was applied.
 */
export class StorageBugError extends HttpError {
  constructor(applied: number, total: number) {
    super(
      500,
      applied === 0
        ? 'Internal error; nothing was applied. It has been logged.'
        : `Internal error after ${applied} of ${total} subscribers were applied; the rest were not. It has been logged.`,
    );
  }
}

/**
 * Applies one transaction's worth of lines: reads their current state,
 * writes the new states and the counter deltas in one transaction
 * conditioned on the versions read, and re-reads and retries on a conflict.
 */
async function applyChunk(
  clientId: string,
  listId: number,
  lines: SubscriberLine[],
): Promise<{ outcomes: Outcome[]; events: EventRecord[]; refused: ReportError[] }> {
  for (let attempt = 0; ; attempt++) {
    const current = await readSubscribers(clientId, listId, lines.map((l) => l.email));
    const now = new Date().toISOString();
    const deltas = zeroDeltas();
    const outcomes: Outcome[] = [];
    const events: EventRecord[] = [];
    const refused: ReportError[] = [];
    const writes = [];
    for (const line of lines) {
      const prior = current.get(line.email);
      const change = applyLine(prior, line, now, listId);
      if (change.refused) {
        refused.push({ line: line.line, email: line.email, cause: change.refused });
        continue;
      }
      outcomes.push(change.outcome);
      events.push(...change.events);
      addDeltas(deltas, change.deltas);
      if (change.next) {
        writes.push({
          Put: {
            TableName: tableName(),
            Item: toItem(clientId, listId, change.next),
            ConditionExpression: prior ? '#v = :v' : 'attribute_not_exists(pk)',
            ExpressionAttributeNames: prior ? { '#v': 'version' } : undefined,
            ExpressionAttributeValues: prior ? { ':v': prior.version } : undefined,
          },
        });
      }
    }
    const counter = counterUpdate(clientId, listId, deltas);
    if (writes.length === 0) return { outcomes, events, refused };
    try {
      await transactWrite(counter ? [...writes, counter] : writes);
      return { outcomes, events, refused };
    } catch (err) {
      if (!isTransactionConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      await sleep(backoffMs(attempt));
    }
  }
}

/** Where the events of applied lines go (the subscriber service stores them). */
export type EventSink = (lines: SubscriberLine[], events: EventRecord[], applied: number) => Promise<void>;

/**
 * Applies validated lines to one list (the last line of an address wins):
 * exact counters, and one nl_subscribe / nl_unsubscribe event per state
 * change handed to `sink` before it returns. Returns the report (errors: the
 * lines refused by the rules). A storage fault after part of the lines were
 * applied is a PartialWriteError that says how many.
 */
export async function applyLines(clientId: string, listId: number, lines: SubscriberLine[], sink: EventSink): Promise<Report> {
  const { unique, duplicateEmails, duplicateGuids } = dedupeLines(lines);
  const chunks: SubscriberLine[][] = [];
  for (let i = 0; i < unique.length; i += LINES_PER_TRANSACTION) chunks.push(unique.slice(i, i + LINES_PER_TRANSACTION));
  const outcomes: Outcome[] = [];
  const events: EventRecord[] = [];
  const refused: ReportError[] = [];
  let applied = 0;
  let failure: unknown;
  await runPool(chunks, TRANSACTIONS_IN_FLIGHT, async (chunk) => {
    if (failure) return;
    try {
      const result = await applyChunk(clientId, listId, chunk);
      outcomes.push(...result.outcomes);
      events.push(...result.events);
      refused.push(...result.refused);
      applied += chunk.length;
    } catch (err) {
      failure ??= err;
    }
  });
  count('SubscribersApplied', applied);
  if (events.length > 0) await sink(unique, events, applied);
  if (failure) {
    const retryable = isRetryableStorageFault(failure);
    logger.warn('subscriber write failed', { retryable, applied, total: unique.length, detail: faultDetail(failure), error: failure as Error });
    if (!retryable) throw new StorageBugError(applied, unique.length);
    throw new PartialWriteError(applied, unique.length);
  }
  return buildReport(refused.sort((a, b) => a.line - b.line), unique.length, duplicateEmails, duplicateGuids, outcomes);
}


/** A subscriber of a list as stored, or undefined. */
export async function getSubscriber(clientId: string, listId: number, email: string): Promise<SubscriberItem | undefined> {
  return (await readSubscribers(clientId, listId, [email.trim().toLowerCase()])).get(email.trim().toLowerCase());
}

/**
 * Updates `data_*` and consent of a known subscriber (the opt-in form's
 * `update`): the line carries no `subscribed`, so it changes no
 * subscription and makes no event; one that did would be a bug, refused
 * before anything is reported as done.
 */
export function updateSubscriberFields(clientId: string, listId: number, line: SubscriberLine): Promise<Report> {
  return applyLines(clientId, listId, [{ ...line, subscribed: undefined }], async () => {
    throw new Error('an update without `subscribed` changed a subscription');
  });
}
