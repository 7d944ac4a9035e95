/**
 * The import worker: streams a stored file from S3 and applies its lines in chunks (idempotent per line), checkpoints
 * after each chunk, before its time runs out leaves a resume marker for the next invocation, and once the whole file
 * is applied runs the update_list sweep.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, S3Event } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { config } from '../config.js';
import { ddb, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { count as countMetric, logger } from '../observability/index.js';
import { s3 } from '../s3.js';
import { importSubscribers } from '../subscribers/index.js';
import type { Report, ReportError, SubscriberLine } from '../subscribers/types.js';
import { ImportFailure, isBlank, readCsv, readHeader, recordToLine, validEmailOf } from './csv.js';
import { addFirstErrors, claimFile, emptyProgress, failFile, LeaseLostError, noteError, MAX_KEPT_EMAILS, readFile, saveProgress, type FileItem, type Progress } from './files.js';
import { fileOfKey, resumeKey } from './objects.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RunOptions {
  /** Who holds the lease (the invocation's request id). */
  owner?: string;
  /** Time left in this invocation (Lambda's getRemainingTimeInMillis). */
  remainingMs?: () => number;
  /** Pause when less than this remains before the next chunk (default 60 s). */
  marginMs?: number;
  /** Lines per chunk (default 500). */
  chunkLines?: number;
  /** Chunks applied concurrently (default 2: each keeps up to 8 write calls in flight, writer.ts). */
  inFlight?: number;
}

export type RunOutcome = 'done' | 'failed' | 'paused' | 'busy' | 'finished-before' | 'missing';

/** The id that makes a line of a file idempotent. */
export const lineOpId = (fileId: number, line: number) => `import#${fileId}#${line}`;
const sweepOpId = (fileId: number) => `import#${fileId}#sweep`;
/** The mark a line of a file leaves on its subscriber (lastImportFile), whatever writes it later. */
export const importFileId = (fileId: number) => String(fileId);

interface Chunk {
  lastLine: number;
  rows: number;
  lines: SubscriberLine[];
  errors: ReportError[];
  kept: string[];
  emails: Set<string>;
}

interface Pending extends Chunk {
  done: Promise<Report | undefined>;
}

const newChunk = (): Chunk => ({ lastLine: 0, rows: 0, lines: [], errors: [], kept: [], emails: new Set() });

function addReport(progress: Progress, chunk: Chunk, report: Report | undefined): void {
  progress.line = chunk.lastLine;
  progress.linesRead += chunk.rows;
  progress.created += report?.nb_created ?? 0;
  progress.subscribed += report?.nb_subscribed ?? 0;
  progress.unsubscribed += report?.nb_unsubscribed ?? 0;
  progress.dataChanged += report?.nb_data_changed ?? 0;
  progress.errors += chunk.errors.length;
  countMetric('ImportLinesApplied', chunk.lines.length);
  countMetric('ImportLinesFailed', chunk.errors.length);
  addFirstErrors(progress.firstErrors, chunk.errors);
  for (const email of chunk.kept) {
    if (progress.keptEmails.includes(email)) continue;
    if (progress.keptEmails.length >= MAX_KEPT_EMAILS) progress.keptOverflow = true;
    else progress.keptEmails.push(email);
  }
}

class Run {
  readonly leaseMs = config.importLeaseSeconds * 1000;
  readonly owner: string;
  readonly remainingMs: () => number;
  readonly marginMs: number;
  readonly chunkLines: number;
  readonly inFlight: number;

  constructor(
    readonly file: FileItem,
    readonly progress: Progress,
    readonly o: RunOptions,
  ) {
    this.owner = o.owner ?? randomUUID();
    this.remainingMs = o.remainingMs ?? (() => Number.POSITIVE_INFINITY);
    this.marginMs = o.marginMs ?? 60_000;
    this.chunkLines = o.chunkLines ?? 500;
    this.inFlight = o.inFlight ?? 2;
  }

  checkpoint(end: Parameters<typeof saveProgress>[3] = {}) {
    return saveProgress(this.file, this.owner, this.progress, { leaseUntil: Date.now() + this.leaseMs, ...end });
  }

  timeIsUp(): boolean {
    return this.remainingMs() < this.marginMs;
  }

  /** Saves, releases the lease and leaves a marker whose creation invokes the worker again. */
  async pause(): Promise<RunOutcome> {
    await this.checkpoint({ release: true });
    await s3.send(new PutObjectCommand({ Bucket: config.importsBucket, Key: resumeKey(this.file.clientId, this.file.id), Body: '' }));
    return 'paused';
  }

  /** Applies the file's lines after the checkpoint; 'paused' when time ran out, else undefined (all read). */
  async applyLines(): Promise<RunOutcome | undefined> {
    const { file, progress } = this;
    const out = await s3.send(new GetObjectCommand({ Bucket: config.importsBucket, Key: file.objectKey }));
    const body = out.Body as Readable;
    const pending: Pending[] = [];
    const settleHead = async () => {
      const head = pending.shift()!;
      const report = await head.done;
      addReport(progress, head, report);
      await this.checkpoint();
    };
    const drain = async () => {
      while (pending.length > 0) await settleHead();
    };
    const dispatch = async (chunk: Chunk) => {
      // A chunk waits for every earlier unsaved chunk that shares an address: the last line still wins,
      // and after a crash at most one unsaved line of an address was applied (its opId makes it a no-op).
      while (pending.length >= this.inFlight || pending.some((p) => [...chunk.emails].some((e) => p.emails.has(e)))) await settleHead();
      const done = chunk.lines.length > 0 ? importSubscribers(file.clientId, file.listId, chunk.lines) : Promise.resolve(undefined);
      done.catch(() => undefined);
      pending.push({ ...chunk, done });
    };
    let columns: Array<string | undefined> | undefined;
    let chunk = newChunk();
    try {
      for await (const record of readCsv(body)) {
        if (record.line === 1) {
          columns = readHeader(record.cells);
          continue;
        }
        if (record.line <= progress.line) continue;
        chunk.lastLine = record.line;
        if (!isBlank(record.cells)) {
          chunk.rows++;
          const parsed = recordToLine(columns!, record.cells, record.line, lineOpId(file.id, record.line));
          if ('cause' in parsed) {
            chunk.errors.push(parsed);
            const kept = validEmailOf(parsed);
            if (kept) chunk.kept.push(kept);
          } else {
            chunk.lines.push({ ...parsed, importFileId: importFileId(file.id) });
            chunk.emails.add(parsed.email);
          }
        }
        // Chunks end at fixed line numbers, so a resumed run cuts the same chunks.
        if ((record.line - 1) % this.chunkLines === 0) {
          if (this.timeIsUp()) {
            await drain();
            return this.pause();
          }
          await dispatch(chunk);
          chunk = newChunk();
        }
      }
      if (!columns) throw new ImportFailure('the file is empty');
      if (chunk.lastLine > 0) await dispatch(chunk);
      await drain();
      return undefined;
    } catch (err) {
      if (!(err instanceof ImportFailure)) throw err;
      await drain();
      throw err;
    } finally {
      body.destroy();
    }
  }

  /**
   * update_list: unsubscribes (PUBLISHER) the subscribed members the file
   * does not contain: lastImportFile is not this file (a later API update,
   * confirmation or bounce keeps it), their last opId is not one of the
   * file's lines (members applied before lastImportFile existed), and no
   * rejected line of the file gave their address.
   */
  async sweep(): Promise<RunOutcome | undefined> {
    const { file, progress } = this;
    const fromFile = `import#${file.id}#`;
    const sweepOp = sweepOpId(file.id);
    const mark = importFileId(file.id);
    const kept = new Set(progress.keptEmails);
    do {
      if (this.timeIsUp()) return this.pause();
      const page = await ddb.send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sub)',
          ExpressionAttributeValues: { ':pk': keys.subscribersPartition(file.clientId, file.listId), ':sub': keys.subscriberPrefix() },
          ProjectionExpression: 'email, subscribed, lastOpId, lastImportFile',
          ConsistentRead: true,
          Limit: 500,
          ExclusiveStartKey: progress.sweepCursor,
        }),
      );
      const items = (page.Items ?? []) as Array<{ email: string; subscribed: boolean; lastOpId?: string; lastImportFile?: string }>;
      const inFile = (i: (typeof items)[number]) => i.lastImportFile === mark || (i.lastOpId ?? '').startsWith(fromFile) || kept.has(i.email);
      // Already swept members after the cursor are applied again: same opId, same outcome reported, nothing changed.
      const absent = items.filter((i) => i.lastOpId === sweepOp || (i.subscribed && !inFile(i)));
      if (absent.length > 0) {
        const lines = absent.map((i) => ({ line: 0, email: i.email, subscribed: false, unsubscribedCause: 'PUBLISHER' as const, opId: sweepOp }));
        const report = await importSubscribers(file.clientId, file.listId, lines);
        progress.unsubscribedAbsent += report.nb_unsubscribed;
      }
      progress.sweepCursor = page.LastEvaluatedKey;
      await this.checkpoint();
    } while (progress.sweepCursor);
    return undefined;
  }

  async run(): Promise<RunOutcome> {
    const { file, progress } = this;
    if (progress.phase === 'lines') {
      try {
        if ((await this.applyLines()) === 'paused') return 'paused';
      } catch (err) {
        if (!(err instanceof ImportFailure)) throw err;
        await this.checkpoint({ status: 'failed', failureCause: err.message });
        return 'failed';
      }
      if (!file.updateList) {
        await this.checkpoint({ status: 'done' });
        return 'done';
      }
      if (progress.keptOverflow) {
        await this.checkpoint({ status: 'done', updateListSkipped: `more than ${MAX_KEPT_EMAILS} rejected lines with a valid address; nobody was unsubscribed` });
        return 'done';
      }
      progress.phase = 'sweep';
      await this.checkpoint();
    }
    if ((await this.sweep()) === 'paused') return 'paused';
    await this.checkpoint({ status: 'done' });
    return 'done';
  }
}

/**
 * Invocations in a row that may end without saving progress (crash,
 * timeout, an error that is not an ImportFailure); the next one fails the
 * file with a cause instead of trying again.
 */
export const MAX_STALLED_INVOCATIONS = 3;

/**
 * Processes one imported file from its last checkpoint. Waits for a lease
 * that is not renewed (its holder died) and leaves a file whose lease is
 * being renewed to its live holder ('busy').
 */
export async function runImport(clientId: string, fileId: number, o: RunOptions = {}): Promise<RunOutcome> {
  const owner = o.owner ?? randomUUID();
  const leaseMs = config.importLeaseSeconds * 1000;
  const remaining = o.remainingMs ?? (() => Number.POSITIVE_INFINITY);
  let seenLease: number | undefined;
  for (let attempt = 0; ; attempt++) {
    const claimed = await claimFile(clientId, fileId, owner, Date.now() + leaseMs);
    if (claimed) {
      const stalled = (claimed.invocations ?? 1) - 1 - (claimed.progressInvocation ?? 0);
      if (stalled >= MAX_STALLED_INVOCATIONS) {
        const last = claimed.lastError ? `; last error: ${claimed.lastError}` : '';
        await failFile(clientId, fileId, `processing failed ${stalled} times in a row without progress${last}`, owner);
        countMetric('ImportsFailed');
        return 'failed';
      }
      const progress = { ...emptyProgress(), ...claimed.progress };
      try {
        return await new Run(claimed, progress, { ...o, owner }).run();
      } catch (err) {
        if (err instanceof LeaseLostError) return 'busy';
        await noteError(claimed, owner, err);
        throw err;
      }
    }
    const file = await readFile(clientId, fileId);
    if (!file) {
      // The uploader records the file just after storing it; the S3 event can be faster.
      if (attempt < 40) {
        await sleep(250);
        continue;
      }
      return 'missing';
    }
    if (file.status === 'done' || file.status === 'failed') return 'finished-before';
    if (file.leaseUntil === undefined) continue;
    if (seenLease !== undefined && file.leaseUntil !== seenLease) return 'busy';
    seenLease = file.leaseUntil;
    const wait = file.leaseUntil - Date.now() + 50;
    if (wait > remaining() - (o.marginMs ?? 60_000)) throw new Error(`file ${fileId} is held by another worker until ${new Date(file.leaseUntil).toISOString()}`);
    await sleep(Math.max(0, wait));
  }
}

/** The worker's Lambda entry: one run per created object under the uploads prefix. */
export async function handleUploadEvent(event: S3Event, context: Pick<Context, 'awsRequestId' | 'getRemainingTimeInMillis'>) {
  const results: Array<{ key: string; outcome: RunOutcome }> = [];
  for (const record of event.Records ?? []) {
    const target = fileOfKey(record.s3.object.key);
    if (!target) continue;
    const outcome = await runImport(target.clientId, target.fileId, { owner: context.awsRequestId, remainingMs: () => context.getRemainingTimeInMillis() });
    logger.info('import run', { clientId: target.clientId, fileId: target.fileId, outcome });
    results.push({ key: record.s3.object.key, outcome });
  }
  return results;
}

/** What Lambda sends an async onFailure destination (requestPayload is the worker's S3 event). */
export interface AsyncFailureEvent {
  requestContext?: { condition?: string; approximateInvokeCount?: number };
  requestPayload?: Partial<S3Event>;
  responsePayload?: { errorType?: string; errorMessage?: string } | null;
}

/**
 * The worker's onFailure destination: its retries are exhausted (or the
 * event expired), so the files of the event that no live worker holds are
 * marked failed with the error as cause.
 */
export async function handleWorkerFailure(event: AsyncFailureEvent) {
  const results: Array<{ key: string; failed: boolean }> = [];
  const count = event.requestContext?.approximateInvokeCount;
  const error = event.responsePayload?.errorMessage ?? event.requestContext?.condition ?? 'unknown error';
  const cause = `the import worker gave up${count ? ` after ${count} attempts` : ''}: ${error}`;
  for (const record of event.requestPayload?.Records ?? []) {
    const target = fileOfKey(record.s3.object.key);
    if (!target) continue;
    const failed = await failFile(target.clientId, target.fileId, cause);
    logger.warn('import worker failure', { clientId: target.clientId, fileId: target.fileId, failed, cause });
    if (failed) countMetric('ImportsFailed');
    results.push({ key: record.s3.object.key, failed });
  }
  return results;
}
