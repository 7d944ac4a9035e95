/**
 * Newsletter picks of a large list as a job (202): a worker writes NDJSON parts to the imports bucket one invocation
 * at a time, each stopping PICKS_JOB_MARGIN_MS before its timeout and resuming through a resume object; the last joins
 * the parts, and polling the job gives a presigned URL (docs/api.md "Newsletter picks").
 */
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from '../config.js';
import { ddb, isConditionFailure, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { s3 } from '../s3.js';
import { RateLimitedError } from '../ratelimit/errors.js';
import { consume } from '../ratelimit/ratelimit.js';
import { UnknownPicksJobError } from './errors.js';
import { NDJSON, PICKS_JOB_TTL_DAYS, readJob, requestKey, type JobItem, type PicksJobStatus } from './job-items.js';
import type { PicksPlan } from './picks.js';

export { NDJSON } from './job-items.js';

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

async function view(job: JobItem): Promise<PicksJobView> {
  const url =
    job.status === 'done' && job.resultKey
      ? await getSignedUrl(
          s3,
          new GetObjectCommand({ Bucket: config.importsBucket, Key: job.resultKey, ResponseContentType: NDJSON, ResponseContentDisposition: `attachment; filename="picks-list-${job.listId}-${job.id}.ndjson"` }),
          { expiresIn: config.picksUrlTtlSeconds },
        )
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
  // Each job reads the whole list and its readers: a client's jobs are limited per hour (fixed windows, counted atomically).
  const limit = config.picksJobsPerHour;
  const allowed = await consume(`picksjobs#${plan.clientId}`, limit, Date.now(), 3_600_000);
  if (!allowed.allowed) {
    throw new RateLimitedError('picks', allowed.retryAfterSeconds, `Too many newsletter-picks jobs: at most ${limit} per hour for a client; retry in ${allowed.retryAfterSeconds} s`);
  }
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

/** A job of the client's list and block (404 for another client's, list's or block's, or an unknown id), with its result's presigned URL once done. */
export async function getPicksJob(clientId: string, listId: number, blockKey: string, jobId: string): Promise<PicksJobView> {
  const job = await readJob(clientId, jobId);
  if (!job || job.listId !== listId || job.blockKey !== blockKey) throw new UnknownPicksJobError(jobId);
  return view(await failedIfStalled(clientId, job));
}

/**
 * A job whose worker died is answered failed (and recorded so): a running job whose current invocation started
 * longer ago than PICKS_STALL_SECONDS (past the worker's timeout), or a queued one never started in that time.
 * A died invocation is not run again (a retried delivery finds its step taken), so without this the job would
 * say "running" until it expires.
 */
async function failedIfStalled(clientId: string, job: JobItem): Promise<JobItem> {
  const since = job.status === 'running' ? job.stepAt : job.status === 'queued' ? Date.parse(job.createdAt) : undefined;
  if (since === undefined || Date.now() - since <= config.picksStallSeconds * 1000) return job;
  const error =
    job.status === 'running'
      ? `The picks worker stopped without finishing (it ran out of time or memory) after ${job.members} members; ask again for a new job.`
      : 'The picks job never started; ask again for a new job.';
  const finishedAt = new Date().toISOString();
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.picksJob(clientId, job.id),
        UpdateExpression: 'SET #status = :failed, #error = :error, #finishedAt = :at',
        // Only the state read: a worker that moved on meanwhile wins.
        ConditionExpression: job.status === 'running' ? '#status = :running AND #stepAt = :stepAt' : '#status = :queued',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error', '#finishedAt': 'finishedAt', ...(job.status === 'running' ? { '#stepAt': 'stepAt' } : {}) },
        ExpressionAttributeValues: { ':failed': 'failed', ':error': error, ':at': finishedAt, ...(job.status === 'running' ? { ':running': 'running', ':stepAt': job.stepAt } : { ':queued': 'queued' }) },
      }),
    );
  } catch (err) {
    if (isConditionFailure(err)) return (await readJob(clientId, job.id)) ?? job;
    throw err;
  }
  return { ...job, status: 'failed', error, finishedAt };
}

