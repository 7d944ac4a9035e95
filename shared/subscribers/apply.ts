/**
 * The core of every subscriber write: lines applied in transactions with
 * exact counters, conflicts retried, storage faults classified. It hands the
 * events of state changes to a sink and stores none itself, so a path that
 * cannot change a subscription (the opt-in form's data update) does not
 * bundle the event store.
 */
import { backoffMs, batchGet, batchWrite, faultDetail, isRetryableStorageFault, isTransactionConflict, reasonCodes, runPool, sleep, tableName, transactWrite } from '../db/client.js';
import { keys } from '../db/keys.js';
import type { EventRecord } from '../events/types.js';
import { HttpError } from '../http/errors.js';
import { count, logger } from '../observability/index.js';
import { addDeltas, applyLine, buildReport, dedupeLines, zeroDeltas, type Change, type Outcome } from './rules.js';
import { compareKeys, counterUpdate, readSortedSubscribers, readSubscribers, toItem, type SubscriberItem } from './store.js';
import type { Report, ReportError, SubscriberLine } from './types.js';
import { claimAddresses, journalChunk, LEASE_WAIT_MS, ListLeaseLostError, leaseFreeCheck, ListBusyError, settleJournal, waitForLease, withListLease, type Hold } from './writer.js';

/** Subscribers written per transaction; one more item moves a counter shard, one checks the list's writer lease. */
export const LINES_PER_TRANSACTION = 98;
export const TRANSACTIONS_IN_FLIGHT = 8;
export const MAX_CONFLICT_RETRIES = 12;
/** Lines per chunk of a bulk write (one journal entry; reads: one Query or two BatchGetItem; eight BatchWriteItem calls). */
export const BULK_CHUNK_LINES = 200;
/** Bulk chunks in flight per write. */
export const BULK_CHUNKS_IN_FLIGHT = 16;

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
  const startedAt = Date.now();
  for (let attempt = 0; ; ) {
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
    const items = [...writes, ...(counter ? [counter] : []), leaseFreeCheck(clientId, listId)];
    try {
      await transactWrite(items);
      return { outcomes, events, refused };
    } catch (err) {
      if (await waitedForLease(err, items.length - 1, clientId, listId, startedAt)) continue;
      if (!isTransactionConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      await sleep(backoffMs(attempt++));
    }
  }
}

/**
 * After a cancelled transaction whose item `checkIndex` was leaseFreeCheck:
 * true when a bulk writer held the list (it waited a moment, or settled and
 * released a dead writer's lease, and the caller re-reads and retries); false
 * for any other cause. Throws ListBusyError after LEASE_WAIT_MS of waiting.
 */
export async function waitedForLease(err: unknown, checkIndex: number, clientId: string, listId: number, startedAt: number): Promise<boolean> {
  if (!isTransactionConflict(err) || reasonCodes(err)[checkIndex] !== 'ConditionalCheckFailed') return false;
  if (Date.now() - startedAt > LEASE_WAIT_MS) throw new ListBusyError();
  await waitForLease(clientId, listId);
  await sleep(50 + Math.random() * 100);
  return true;
}

interface Applied {
  outcomes: Outcome[];
  events: EventRecord[];
  refused: ReportError[];
  applied: number;
  failure?: unknown;
}

/** A bulk chunk failed after some of its lines landed (those are in `landed`, the counters match them). */
class ChunkFailure extends Error {
  constructor(
    readonly landed: { outcomes: Outcome[]; events: EventRecord[]; count: number },
    override readonly cause: unknown,
  ) {
    super('bulk chunk failed', { cause });
  }
}

/**
 * Writes one bulk chunk under the list's lease: reads the current items
 * (those the hold's address filter does not rule out),
 * commits the counter deltas with a journal entry (when any line moves a
 * counter), then writes the items with BatchWriteItem, stamped with the
 * entry's writeId. When the items cannot all be written, reads them back,
 * settles the journal entry (counters keep only the lines that landed) and
 * throws a ChunkFailure naming them.
 */
async function writeChunk(hold: Hold, clientId: string, listId: number, lines: SubscriberLine[]) {
  hold.checkTime();
  // Addresses the filter rules out are certainly absent: only the others are read.
  const filter = hold.filter;
  const toRead = filter ? lines.filter((l) => filter.has(l.email)) : lines;
  const current = toRead.length > 0 ? await readSortedSubscribers(clientId, listId, toRead.map((l) => l.email)) : new Map<string, SubscriberItem>();
  const now = new Date().toISOString();
  const outcomes: Outcome[] = [];
  const events: EventRecord[] = [];
  const refused: ReportError[] = [];
  const changes: Array<{ line: SubscriberLine; change: Change }> = [];
  for (const line of lines) {
    const change = applyLine(current.get(line.email), line, now, listId);
    if (change.refused) refused.push({ line: line.line, email: line.email, cause: change.refused });
    else changes.push({ line, change });
  }
  const moving = changes.filter(({ change }) => Object.values(change.deltas).some((n) => n !== 0));
  const writeId = moving.length > 0 ? await journalChunk(hold, moving.map(({ line, change }) => ({ email: line.email, deltas: change.deltas }))) : undefined;
  const written = changes.filter(({ change }) => change.next);
  if (filter) for (const { line } of written) filter.add(line.email);
  try {
    await batchWrite(
      written.map(({ change }) => ({ PutRequest: { Item: { ...toItem(clientId, listId, change.next!), ...(writeId ? { writeId } : {}) } } })),
      { concurrency: 4 },
    );
  } catch (err) {
    // Which items landed: this writer holds the list, so an item at the version it wrote is its own.
    const after = await batchGet<SubscriberItem>(written.map(({ line }) => keys.subscriber(clientId, listId, line.email))).catch(() => undefined);
    if (!after) {
      hold.poisoned = true; // the next holder settles the journal entry
      throw err;
    }
    if (writeId) await settleJournal(hold, [writeId]);
    const versions = new Map(after.map((i) => [i.email, i.version]));
    const landed = written.filter(({ change }) => versions.get(change.next!.email) === change.next!.version);
    throw new ChunkFailure({ outcomes: landed.map(({ change }) => change.outcome), events: landed.flatMap(({ change }) => change.events), count: landed.length }, err);
  }
  for (const { change } of changes) {
    outcomes.push(change.outcome);
    events.push(...change.events);
  }
  return { outcomes, events, refused };
}

/** Applies deduplicated lines in bulk chunks under the list's writer lease. */
function applyBulk(clientId: string, listId: number, unique: SubscriberLine[]): Promise<Applied> {
  return withListLease(clientId, listId, async (hold) => {
    // Sorted by address, each chunk is one key range of the list (readSortedSubscribers).
    const sorted = [...unique].sort((a, b) => compareKeys(a.email, b.email));
    const chunks: SubscriberLine[][] = [];
    for (let i = 0; i < sorted.length; i += BULK_CHUNK_LINES) chunks.push(sorted.slice(i, i + BULK_CHUNK_LINES));
    const acc: Applied = { outcomes: [], events: [], refused: [], applied: 0 };
    await runPool(chunks, BULK_CHUNKS_IN_FLIGHT, async (chunk) => {
      if (acc.failure) return;
      let finish!: () => void;
      const done = new Promise<void>((resolve) => (finish = resolve));
      try {
        await claimAddresses(
          hold,
          chunk.map((l) => l.email),
          done,
        );
        const result = await writeChunk(hold, clientId, listId, chunk);
        acc.outcomes.push(...result.outcomes);
        acc.events.push(...result.events);
        acc.refused.push(...result.refused);
        acc.applied += chunk.length;
      } catch (err) {
        if (err instanceof ChunkFailure) {
          acc.outcomes.push(...err.landed.outcomes);
          acc.events.push(...err.landed.events);
          acc.applied += err.landed.count;
        }
        acc.failure ??= err instanceof ChunkFailure ? err.cause : err;
      } finally {
        finish();
      }
    });
    return acc;
  });
}

/** Applies deduplicated lines in transactions (the path of small writes, which never wait for a whole list). */
async function applyInTransactions(clientId: string, listId: number, unique: SubscriberLine[]): Promise<Applied> {
  const chunks: SubscriberLine[][] = [];
  for (let i = 0; i < unique.length; i += LINES_PER_TRANSACTION) chunks.push(unique.slice(i, i + LINES_PER_TRANSACTION));
  const acc: Applied = { outcomes: [], events: [], refused: [], applied: 0 };
  await runPool(chunks, TRANSACTIONS_IN_FLIGHT, async (chunk) => {
    if (acc.failure) return;
    try {
      const result = await applyChunk(clientId, listId, chunk);
      acc.outcomes.push(...result.outcomes);
      acc.events.push(...result.events);
      acc.refused.push(...result.refused);
      acc.applied += chunk.length;
    } catch (err) {
      acc.failure ??= err;
    }
  });
  return acc;
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
  const bulk = unique.length > LINES_PER_TRANSACTION;
  let result: Applied;
  try {
    result = bulk ? await applyBulk(clientId, listId, unique) : await applyInTransactions(clientId, listId, unique);
  } catch (err) {
    // The lease could not be taken (or released): nothing was applied.
    result = { outcomes: [], events: [], refused: [], applied: 0, failure: err };
  }
  const { outcomes, events, refused, applied, failure } = result;
  count('SubscribersApplied', applied);
  if (events.length > 0) await sink(unique, events, applied);
  if (failure) {
    if (failure instanceof ListBusyError && applied === 0) throw failure;
    const retryable = failure instanceof ListBusyError || failure instanceof ListLeaseLostError || isRetryableStorageFault(failure);
    logger.warn('subscriber write failed', { retryable, bulk, applied, total: unique.length, detail: faultDetail(failure), error: failure });
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
