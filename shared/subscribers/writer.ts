/**
 * The request side of subscriber writes: read the lines' items, apply rules.ts, write each item conditioned on the
 * version read (no lock; a line that loses a race is read and applied again). Counts and events: stream-consumer.ts.
 */
import { backoffMs, executeStatements, faultDetail, isRetryableStorageFault, runPool, sleep, type WriteStatement } from '../db/client.js';
import { count, logger } from '../observability/index.js';
import { changeClock } from './clock.js';
import { PartialWriteError, StorageBugError } from './errors.js';
import { applyLine, buildReport, dedupeLines, type Outcome, type SubscriberState } from './rules.js';
import { deleteStatement, readStates, readSubscribers, writeStatement, type SubscriberItem } from './store.js';
import type { Report, ReportError, SubscriberLine } from './types.js';

/** Lines read and written together: one BatchGetItem (its most), then 4 BatchExecuteStatement calls. */
export const LINES_PER_CHUNK = 100;
/** Chunks in flight per write: at most 8 statement calls at once, as many as a raw BatchWriteItem baseline keeps. */
const CHUNKS_IN_FLIGHT = 2;
/** A write with a deadline starts no chunk with less than this left. */
export const CHUNK_MARGIN_MS = 3_000;
/** Rounds of read-and-apply a line may lose to other writers (or to throttling) before the write gives up. */
const MAX_ROUNDS = 10;

/** Per-statement errors a new round of read-and-apply cures: a lost race, throttling, a fault of DynamoDB. */
const RETRIED = new Set(['ConditionalCheckFailed', 'DuplicateItem', 'TransactionConflict', 'ProvisionedThroughputExceeded', 'ThrottlingError', 'RequestLimitExceeded', 'InternalServerError']);

/** A statement failed with an error no retry cures (a bug of the statement). */
class StatementError extends Error {
  override name = 'StatementError';
}

/**
 * Runs `round` on the pending entries until none is left: each round returns the entries whose statement lost
 * (to read and apply again, after a backoff). Throws after MAX_ROUNDS.
 */
async function untilApplied<T>(pending: T[], round: (pending: T[]) => Promise<T[]>): Promise<void> {
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= MAX_ROUNDS) throw new PartialWriteError(0, pending.length, 'storage');
    if (attempt > 0) await sleep(backoffMs(attempt));
    pending = await round(pending);
  }
}

/**
 * Runs statements; returns the indexes of those to try again (a lost race, or a fault a retry cures) and the first
 * failure no retry cures.
 */
async function runStatements(statements: WriteStatement[]): Promise<{ applied: (i: number) => boolean; lost: Set<number>; failure?: Error }> {
  const results = await executeStatements(statements, { concurrency: 4 });
  const lost = new Set<number>();
  let failure: Error | undefined;
  results.forEach((result, i) => {
    if (result === undefined) return;
    if (result instanceof Error ? isRetryableStorageFault(result) : RETRIED.has(result)) lost.add(i);
    else failure ??= result instanceof Error ? result : new StatementError(`statement refused: ${result}`);
  });
  return { applied: (i) => results[i] === undefined, lost, failure };
}

interface Applied {
  outcomes: Outcome[];
  refused: ReportError[];
  applied: number;
}

/** Applies one chunk's lines: read, rules, conditional writes; the lines whose write lost go round again. */
async function applyChunk(clientId: string, listId: number, lines: SubscriberLine[], acc: Applied): Promise<void> {
  await untilApplied(lines, async (pending) => {
    const current = await readStates(
      clientId,
      listId,
      pending.map((l) => l.email),
    );
    const now = new Date(changeClock.now()).toISOString();
    const writes: Array<{ line: SubscriberLine; outcome: Outcome; statement: WriteStatement }> = [];
    for (const line of pending) {
      const prior: SubscriberState | undefined = current.get(line.email);
      const change = applyLine(prior, line, now, listId);
      if (change.refused) acc.refused.push({ line: line.line, email: line.email, cause: change.refused });
      else if (!change.next) {
        acc.outcomes.push(change.outcome);
        acc.applied++;
      } else writes.push({ line, outcome: change.outcome, statement: writeStatement(clientId, listId, change.next, prior?.version) });
    }
    const { applied, lost, failure } = await runStatements(writes.map((w) => w.statement));
    const done = writes.filter((_, i) => applied(i));
    for (const w of done) acc.outcomes.push(w.outcome);
    acc.applied += done.length;
    count('SubscribersApplied', done.length);
    if (failure) throw failure;
    return writes.filter((_, i) => lost.has(i)).map((w) => w.line);
  });
}

/**
 * Applies validated lines to one list (the last line of an address wins) and returns the report (its errors: the
 * lines the rules refused). Given a deadline (epoch ms), starts no chunk within CHUNK_MARGIN_MS of it. Throws
 * PartialWriteError (or StorageBugError) with the count applied when it stopped part-way.
 */
export async function applyLines(clientId: string, listId: number, lines: SubscriberLine[], { deadline = Number.POSITIVE_INFINITY }: { deadline?: number } = {}): Promise<Report> {
  const { unique, duplicateEmails, duplicateGuids } = dedupeLines(lines);
  const chunks: SubscriberLine[][] = [];
  for (let i = 0; i < unique.length; i += LINES_PER_CHUNK) chunks.push(unique.slice(i, i + LINES_PER_CHUNK));
  const acc: Applied = { outcomes: [], refused: [], applied: 0 };
  let failure: unknown;
  await runPool(chunks, CHUNKS_IN_FLIGHT, async (chunk) => {
    if (failure !== undefined) return;
    if (Date.now() > deadline - CHUNK_MARGIN_MS && acc.applied > 0) {
      failure = new PartialWriteError(acc.applied, unique.length, 'time');
      return;
    }
    await applyChunk(clientId, listId, chunk, acc).catch((err: unknown) => void (failure ??= err));
  });
  if (failure !== undefined) throw stopped(failure, acc.applied, unique.length);
  return buildReport(acc.refused.sort((a, b) => a.line - b.line), unique.length, duplicateEmails, duplicateGuids, acc.outcomes);
}

/** The domain error of a write that stopped after `applied` of `total` lines. */
function stopped(failure: unknown, applied: number, total: number): Error {
  if (failure instanceof PartialWriteError) return new PartialWriteError(applied, total, failure.reason, { cause: failure.cause });
  const retryable = isRetryableStorageFault(failure);
  logger.warn('subscriber write failed', { retryable, applied, total, detail: faultDetail(failure), error: failure as Error });
  return retryable ? new PartialWriteError(applied, total, 'storage', { cause: failure }) : new StorageBugError(applied, total, { cause: failure });
}

/**
 * Deletes the subscribers of one list among `emails` (read by key, strongly consistent, so an address written a
 * moment ago is seen), each conditioned on the version read; returns the items deleted. The `nl_delete` events and
 * the counters follow from the stream's REMOVE records. What was deleted is also pushed into `deleted` as it goes,
 * so a caller still knows it when the deletion stops part-way.
 */
export async function deleteSubscribers(clientId: string, listId: number, emails: string[], deleted: SubscriberItem[] = []): Promise<SubscriberItem[]> {
  const chunks: string[][] = [];
  for (let i = 0; i < emails.length; i += LINES_PER_CHUNK) chunks.push(emails.slice(i, i + LINES_PER_CHUNK));
  await runPool(chunks, CHUNKS_IN_FLIGHT, (chunk) =>
    untilApplied(chunk, async (pending) => {
      const items = [...(await readSubscribers(clientId, listId, pending)).values()];
      const { applied, lost, failure } = await runStatements(items.map((item) => deleteStatement(clientId, listId, item.email, item.version)));
      deleted.push(...items.filter((_, i) => applied(i)));
      if (failure) throw failure;
      return items.filter((_, i) => lost.has(i)).map((item) => item.email);
    }),
  );
  return deleted;
}

/** A subscriber of a list as stored, or undefined. */
export async function getSubscriber(clientId: string, listId: number, email: string): Promise<SubscriberItem | undefined> {
  const normalised = email.trim().toLowerCase();
  return (await readSubscribers(clientId, listId, [normalised])).get(normalised);
}
