/**
 * Imported files (spec 2.7): the item that holds a file's status, progress
 * and checkpoint, the worker's lease on it, and the API view of it.
 */
import { LeaseLostError, UnknownFileError } from './errors.js';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailure, queryAll, tableName } from '../db/client.js';
import { keys, UNFINISHED_IMPORTS, unfinishedImportOf } from '../db/keys.js';
import type { ReportError } from '../subscribers/types.js';

/** uploaded → processing → done | failed (docs/api.md). */
export type ImportStatus = 'uploaded' | 'processing' | 'done' | 'failed';

/** Errors kept for the API (the count is exact; the list is the first ones). */
export const MAX_REPORTED_ERRORS = 100;
/** Stored errors: each email and cause is cut to these lengths, and the list to this many bytes (a DynamoDB item holds 400 KB). */
export const MAX_ERROR_EMAIL_CHARS = 254;
export const MAX_ERROR_CAUSE_CHARS = 300;
export const MAX_REPORTED_ERRORS_BYTES = 32 * 1024;
/** Longest failure cause stored. */
export const MAX_FAILURE_CAUSE_CHARS = 1000;

/** The text cut to `max` characters, with `…` when cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Appends errors to the stored first ones: each error's email and cause
 * clipped, at most MAX_REPORTED_ERRORS entries and MAX_REPORTED_ERRORS_BYTES
 * of JSON in all (the count of errors stays exact elsewhere).
 */
export function addFirstErrors(kept: ReportError[], more: ReportError[]): void {
  let bytes = Buffer.byteLength(JSON.stringify(kept));
  for (const error of more) {
    if (kept.length >= MAX_REPORTED_ERRORS) return;
    const stored: ReportError = {
      line: error.line,
      email: error.email === null ? null : clip(String(error.email), MAX_ERROR_EMAIL_CHARS),
      cause: clip(String(error.cause), MAX_ERROR_CAUSE_CHARS),
    };
    const size = Buffer.byteLength(JSON.stringify(stored)) + 1;
    if (bytes + size > MAX_REPORTED_ERRORS_BYTES) return;
    kept.push(stored);
    bytes += size;
  }
}

/** Addresses of rejected lines kept so update_list does not unsubscribe them; past this the sweep is skipped. */
export const MAX_KEPT_EMAILS = 1000;

/** Cumulative progress, saved with each checkpoint. */
export interface Progress {
  /** Last record (line) consumed; the next invocation starts after it. */
  line: number;
  linesRead: number;
  created: number;
  subscribed: number;
  unsubscribed: number;
  dataChanged: number;
  errors: number;
  firstErrors: ReportError[];
  /** Valid addresses of rejected lines: in the file, so not unsubscribed by update_list. */
  keptEmails: string[];
  keptOverflow: boolean;
  phase: 'lines' | 'sweep';
  /** Where the update_list sweep continues in the list partition. */
  sweepCursor?: Record<string, unknown>;
  unsubscribedAbsent: number;
}

export const emptyProgress = (): Progress => ({
  line: 1,
  linesRead: 0,
  created: 0,
  subscribed: 0,
  unsubscribed: 0,
  dataChanged: 0,
  errors: 0,
  firstErrors: [],
  keptEmails: [],
  keptOverflow: false,
  phase: 'lines',
  unsubscribedAbsent: 0,
});

export interface FileItem {
  clientId: string;
  id: number;
  name: string;
  url: string;
  mediatype: string;
  subtype: string;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  size: number;
  status: ImportStatus;
  listId: number;
  updateList: boolean;
  /** The stored file in IMPORTS_BUCKET. */
  objectKey: string;
  progress: Progress;
  failureCause?: string;
  updateListSkipped?: string;
  leaseOwner?: string;
  leaseUntil?: number;
  invocations?: number;
  /** The invocation (count) that last saved progress; invocations far past it mean the file is stuck. */
  progressInvocation?: number;
  /** The last unexpected error of a run (not an ImportFailure), for the failure cause. */
  lastError?: string;
}

/** The API view: spec 2.7's fields, then progress (docs/api.md). */
export function toImportedFile(f: FileItem) {
  const p = f.progress;
  return {
    id: f.id,
    name: f.name,
    url: f.url,
    mediatype: f.mediatype,
    subtype: f.subtype,
    created_at: f.createdAt,
    size: f.size,
    status: f.status,
    email_list_id: f.listId,
    update_list: f.updateList,
    updated_at: f.updatedAt,
    finished_at: f.finishedAt ?? null,
    failure_cause: f.failureCause ?? null,
    progress: {
      lines_read: p.linesRead,
      created: p.created,
      subscribed: p.subscribed,
      unsubscribed: p.unsubscribed,
      data_changed: p.dataChanged,
      errors: p.errors,
      unsubscribed_absent: p.unsubscribedAbsent,
      update_list_skipped: f.updateListSkipped ?? null,
    },
    errors: p.firstErrors,
  };
}

export type ImportedFile = ReturnType<typeof toImportedFile>;

export async function putFile(file: FileItem): Promise<void> {
  await ddb.send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.file(file.clientId, file.id), type: 'file', ...file, ...keys.unfinishedImport(file.clientId, file.id) },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** The file item, or undefined. */
export async function readFile(clientId: string, fileId: number): Promise<FileItem | undefined> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.file(clientId, fileId), ConsistentRead: true }));
  return out.Item as FileItem | undefined;
}

/** An imported file of the client; UnknownFileError when it does not exist or belongs to another client. */
export async function getImportedFile(clientId: string, fileId: number): Promise<ImportedFile> {
  const file = await readFile(clientId, fileId);
  if (!file) throw new UnknownFileError(clientId, fileId);
  return toImportedFile(file);
}

/** All imported files of the client, by id. */
export async function listImportedFiles(clientId: string): Promise<ImportedFile[]> {
  const items = await queryAll<FileItem>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.client(clientId).pk, ':prefix': keys.filePrefix() },
  });
  return items.map(toImportedFile);
}



/**
 * Claims the file for one worker until `leaseUntil` (epoch ms): only an
 * uploaded or processing file whose lease is free or expired. Returns the
 * item as claimed, or undefined when the condition fails.
 */
export { LeaseLostError };

export async function claimFile(clientId: string, fileId: number, owner: string, leaseUntil: number): Promise<FileItem | undefined> {
  const now = Date.now();
  try {
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.file(clientId, fileId),
        UpdateExpression: 'SET #s = :processing, leaseOwner = :me, leaseUntil = :until, updatedAt = :iso ADD invocations :one',
        ConditionExpression: 'attribute_exists(pk) AND #s IN (:uploaded, :processing) AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':processing': 'processing',
          ':uploaded': 'uploaded',
          ':me': owner,
          ':until': leaseUntil,
          ':now': now,
          ':iso': new Date(now).toISOString(),
          ':one': 1,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as FileItem;
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/**
 * Saves progress under the lease (extending it), and optionally ends the
 * run: `status` done/failed releases the lease; `release` alone pauses.
 */
export async function saveProgress(
  file: Pick<FileItem, 'clientId' | 'id' | 'invocations'>,
  owner: string,
  progress: Progress,
  end: { leaseUntil?: number; status?: 'done' | 'failed'; failureCause?: string; updateListSkipped?: string; release?: boolean } = {},
): Promise<void> {
  const now = new Date().toISOString();
  const sets = ['progress = :p', 'updatedAt = :now'];
  const values: Record<string, unknown> = { ':p': progress, ':now': now, ':me': owner };
  if (file.invocations !== undefined) {
    sets.push('progressInvocation = :inv');
    values[':inv'] = file.invocations;
  }
  const names: Record<string, string> = {};
  if (end.status) {
    sets.push('#s = :s', 'finishedAt = :now');
    names['#s'] = 'status';
    values[':s'] = end.status;
  }
  if (end.failureCause !== undefined) {
    sets.push('failureCause = :fc');
    values[':fc'] = clip(end.failureCause, MAX_FAILURE_CAUSE_CHARS);
  }
  if (end.updateListSkipped !== undefined) {
    sets.push('updateListSkipped = :us');
    values[':us'] = end.updateListSkipped;
  }
  const release = end.status !== undefined || end.release;
  if (!release && end.leaseUntil !== undefined) {
    sets.push('leaseUntil = :until');
    values[':until'] = end.leaseUntil;
  }
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.file(file.clientId, file.id),
        UpdateExpression: `SET ${sets.join(', ')}${release ? ` REMOVE leaseOwner, leaseUntil${end.status ? ', gsi1pk, gsi1sk' : ''}` : ''}`,
        ConditionExpression: 'leaseOwner = :me',
        ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
        ExpressionAttributeValues: values,
      }),
    );
  } catch (err) {
    if (isConditionFailure(err)) throw new LeaseLostError(`lost the lease on file ${file.id}`);
    throw err;
  }
}

/**
 * Ends a file as failed with a cause (progress kept as last saved). With
 * `owner`: only while that worker holds the lease. Without: only an
 * unfinished file whose lease is free or expired (no live worker on it).
 * False when the condition does not hold.
 */
export async function failFile(clientId: string, fileId: number, cause: string, owner?: string): Promise<boolean> {
  const now = Date.now();
  const iso = new Date(now).toISOString();
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.file(clientId, fileId),
        UpdateExpression: 'SET #s = :failed, failureCause = :fc, finishedAt = :iso, updatedAt = :iso REMOVE leaseOwner, leaseUntil, gsi1pk, gsi1sk',
        ConditionExpression:
          owner !== undefined
            ? 'leaseOwner = :me'
            : 'attribute_exists(pk) AND #s IN (:uploaded, :processing) AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':failed': 'failed',
          ':fc': clip(cause, MAX_FAILURE_CAUSE_CHARS),
          ':iso': iso,
          ...(owner !== undefined ? { ':me': owner } : { ':uploaded': 'uploaded', ':processing': 'processing', ':now': now }),
        },
      }),
    );
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/** Notes a run's unexpected error on the file while holding its lease (best effort: never throws). */
export async function noteError(file: Pick<FileItem, 'clientId' | 'id'>, owner: string, error: unknown): Promise<void> {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.file(file.clientId, file.id),
        UpdateExpression: 'SET lastError = :e',
        ConditionExpression: 'leaseOwner = :me',
        ExpressionAttributeValues: { ':e': clip(message, MAX_FAILURE_CAUSE_CHARS), ':me': owner },
      }),
    );
  } catch {
    // The error itself is what the caller reports.
  }
}

/** Client and file of every import not finished yet (the sweeper's index; eventually consistent). */
export async function listUnfinishedImports(): Promise<Array<{ clientId: string; fileId: number }>> {
  const items = await queryAll<{ gsi1sk: string }>({
    TableName: tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :p',
    ExpressionAttributeValues: { ':p': UNFINISHED_IMPORTS },
    ProjectionExpression: 'gsi1sk',
  });
  return items.map((item) => unfinishedImportOf(item.gsi1sk));
}
