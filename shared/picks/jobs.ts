/**
 * Newsletter picks of a large list, as a job: the request answers 202 with the job; a worker (the import worker's
 * function, started by the job's request object under uploads/picks/ in the imports bucket, as CSV imports are)
 * writes the lines as NDJSON to the bucket, an invocation at a time: each runs until PICKS_JOB_MARGIN_MS before its
 * timeout, stores its part and where it stopped, and puts a resume object that starts the next invocation. The
 * last one joins the parts into one object (copied inside S3) and the job becomes `done`; GET
 * /v1/newsletters/lists/{list_id}/recommendations?job={job_id} then gives a presigned URL of it. docs/api.md "Newsletter picks".
 */
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { ddb, isConditionFailure, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { s3EventStore } from '../events/store.js';
import { s3 } from '../s3.js';
import { logger } from '../observability/index.js';
import { UnknownPicksJobError } from './errors.js';
import { PICKS_REQUESTS_PREFIX, PICKS_RESULTS_PREFIX } from './objects.js';
import { runPicks, type PicksLine, type PicksPlan } from './picks.js';

/** A job item (and so its result's URL) is kept this long. */
export const PICKS_JOB_TTL_DAYS = 7;
export const NDJSON = 'application/x-ndjson';

export type PicksJobStatus = 'queued' | 'running' | 'done' | 'failed';

interface JobItem {
  id: string;
  listId: number;
  blockKey: string;
  rows: number;
  rid: string;
  status: PicksJobStatus;
  createdAt: string;
  finishedAt?: string;
  members: number;
  parts: Array<{ key: string; size: number }>;
  cursor?: Record<string, string>;
  resultKey?: string;
  error?: string;
}

/** The API's view of a job. */
export interface PicksJobView {
  job_id: string;
  status: PicksJobStatus;
  list_id: number;
  block_key: string;
  rows: number;
  rid: string;
  members: number;
  created_at: string;
  finished_at: string | null;
  result_url: string | null;
  error: string | null;
}

const requestKey = (clientId: string, jobId: string, step: number) => `${PICKS_REQUESTS_PREFIX}${clientId}/${jobId}/${step === 1 ? 'start' : `resume-${step}`}`;
const partKey = (clientId: string, jobId: string, step: number) => `${PICKS_RESULTS_PREFIX}${clientId}/${jobId}/part-${String(step).padStart(4, '0')}.ndjson`;
const resultKey = (clientId: string, jobId: string) => `${PICKS_RESULTS_PREFIX}${clientId}/${jobId}/picks.ndjson`;
const bucketStore = () => s3EventStore(config.importsBucket);

/** The job of a request object (keys as S3 events give them, URL-encoded); undefined for anything else. */
export function jobOfKey(rawKey: string): { clientId: string; jobId: string } | undefined {
  const key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
  const match = /^uploads\/picks\/([a-z0-9][a-z0-9_-]*)\/([A-Za-z0-9_-]{16})\/(start|resume-\d+)$/.exec(key);
  return match ? { clientId: match[1], jobId: match[2] } : undefined;
}

async function readJob(clientId: string, jobId: string): Promise<JobItem | undefined> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.picksJob(clientId, jobId), ConsistentRead: true }));
  return out.Item as JobItem | undefined;
}

async function view(job: JobItem): Promise<PicksJobView> {
  const url =
    job.status === 'done' && job.resultKey
      ? await bucketStore().presign(job.resultKey, { filename: `picks-list-${job.listId}-${job.id}.ndjson`, contentType: NDJSON, expiresIn: config.picksUrlTtlSeconds })
      : null;
  return {
    job_id: job.id,
    status: job.status,
    list_id: job.listId,
    block_key: job.blockKey,
    rows: job.rows,
    rid: job.rid,
    members: job.members,
    created_at: job.createdAt,
    finished_at: job.finishedAt ?? null,
    result_url: url,
    error: job.error ?? null,
  };
}

/** Records a job for the plan and puts its request object (which starts the worker). */
export async function createPicksJob(plan: PicksPlan): Promise<PicksJobView> {
  const id = randomBytes(12).toString('base64url');
  const now = new Date();
  const job: JobItem = { id, listId: plan.listId, blockKey: plan.blockKey, rows: plan.rows, rid: plan.rid, status: 'queued', createdAt: now.toISOString(), members: 0, parts: [] };
  await ddb.send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.picksJob(plan.clientId, id), type: 'picks-job', ...job, ttl: Math.floor(now.getTime() / 1000) + PICKS_JOB_TTL_DAYS * 86_400 },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  await s3.send(new PutObjectCommand({ Bucket: config.importsBucket, Key: requestKey(plan.clientId, id, 1), Body: '' }));
  return view(job);
}

/** A job of the client's list (404 for another client's or list's, or an unknown id), with its result's presigned URL once done. */
export async function getPicksJob(clientId: string, listId: number, jobId: string): Promise<PicksJobView> {
  const job = await readJob(clientId, jobId);
  if (!job || job.listId !== listId) throw new UnknownPicksJobError(jobId);
  return view(job);
}

/**
 * One invocation of the worker for a job: continues from its checkpoint until the end of the list or until
 * `remainingMs()` is under PICKS_JOB_MARGIN_MS, writing its lines as the job's next part. Returns what it did.
 * A second delivery of the same request object finds the part already taken and does nothing.
 */
export async function runPicksJob(clientId: string, jobId: string, remainingMs: () => number, baseUrl = config.publicBaseUrl): Promise<{ job: string; members: number; status: PicksJobStatus | 'skipped' }> {
  const job = await readJob(clientId, jobId);
  if (!job || job.status === 'done' || job.status === 'failed') return { job: jobId, members: 0, status: 'skipped' };
  const step = job.parts.length + 1;
  try {
    // The step is this invocation's: the parts list has not grown since it was read, and no other invocation took it.
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.picksJob(clientId, jobId),
        UpdateExpression: 'SET #status = :running, #step = :step',
        ConditionExpression: 'size(#parts) = :done AND (attribute_not_exists(#step) OR #step < :step)',
        ExpressionAttributeNames: { '#status': 'status', '#step': 'step', '#parts': 'parts' },
        ExpressionAttributeValues: { ':running': 'running', ':step': step, ':done': step - 1 },
      }),
    );
  } catch (err) {
    if (isConditionFailure(err)) return { job: jobId, members: 0, status: 'skipped' };
    throw err;
  }
  const plan: PicksPlan = { clientId, listId: job.listId, blockKey: job.blockKey, rows: job.rows, rid: job.rid };
  try {
    const key = partKey(clientId, jobId, step);
    const body = new PassThrough();
    let size = 0;
    const written = bucketStore().write(key, body, { contentType: NDJSON });
    written.catch(() => undefined);
    const emit = async (lines: PicksLine[]) => {
      const chunk = lines.map((l) => `${JSON.stringify(l)}\n`).join('');
      size += Buffer.byteLength(chunk);
      if (!body.write(chunk)) await new Promise((done) => body.once('drain', done));
    };
    let run: Awaited<ReturnType<typeof runPicks>>;
    try {
      run = await runPicks(plan, { startKey: job.cursor, emit, stop: () => remainingMs() < config.picksJobMarginMs, baseUrl });
    } finally {
      body.end();
    }
    await written;
    const parts = [...job.parts, { key, size }];
    const members = job.members + run.members;
    if (run.nextKey) {
      await ddb.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.picksJob(clientId, jobId),
          UpdateExpression: 'SET #parts = :parts, #cursor = :cursor, #members = :members',
          ConditionExpression: '#step = :step',
          ExpressionAttributeNames: { '#parts': 'parts', '#cursor': 'cursor', '#members': 'members', '#step': 'step' },
          ExpressionAttributeValues: { ':parts': parts, ':cursor': run.nextKey, ':members': members, ':step': step },
        }),
      );
      await s3.send(new PutObjectCommand({ Bucket: config.importsBucket, Key: requestKey(clientId, jobId, step + 1), Body: '' }));
      return { job: jobId, members, status: 'running' };
    }
    // One part: it is the result. Several: joined into one object inside S3 (parts of 5 MiB or more are copied, not read).
    let result = key;
    if (parts.length > 1) {
      result = resultKey(clientId, jobId);
      await bucketStore().concat(result, parts, { contentType: NDJSON });
    }
    await finish(clientId, jobId, { status: 'done', parts, members, resultKey: result });
    return { job: jobId, members, status: 'done' };
  } catch (err) {
    // Not retried: the job says why (and the log), and the client asks again.
    logger.error('newsletter picks failed', { clientId, jobId, error: err as Error });
    await finish(clientId, jobId, { status: 'failed', error: `The picks could not be made: ${(err as Error).message}`.slice(0, 500) });
    return { job: jobId, members: 0, status: 'failed' };
  }
}

async function finish(clientId: string, jobId: string, o: { status: 'done' | 'failed'; parts?: JobItem['parts']; members?: number; resultKey?: string; error?: string }): Promise<void> {
  const set: Record<string, unknown> = { status: o.status, finishedAt: new Date().toISOString(), ...(o.parts ? { parts: o.parts } : {}), ...(o.members !== undefined ? { members: o.members } : {}), ...(o.resultKey ? { resultKey: o.resultKey } : {}), ...(o.error ? { error: o.error } : {}) };
  const names = Object.keys(set);
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.picksJob(clientId, jobId),
      UpdateExpression: `SET ${names.map((_, i) => `#n${i} = :v${i}`).join(', ')} REMOVE #cursor`,
      ExpressionAttributeNames: { ...Object.fromEntries(names.map((n, i) => [`#n${i}`, n])), '#cursor': 'cursor' },
      ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, set[n]])),
    }),
  );
}
