/**
 * The item and the objects of a newsletter-picks job (shared by the request path, jobs.ts, and the worker,
 * worker.ts): a job item holds the plan, the status, the parts written so far and where the next invocation
 * continues.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { PICKS_REQUESTS_PREFIX, PICKS_RESULTS_PREFIX } from './objects.js';

/** A job item (and so its result's URL) is kept this long. */
export const PICKS_JOB_TTL_DAYS = 7;
export const NDJSON = 'application/x-ndjson';

export type PicksJobStatus = 'queued' | 'running' | 'done' | 'failed';

export interface JobItem {
  id: string;
  listId: number;
  blockKey: string;
  rows: number;
  rid: string;
  status: PicksJobStatus;
  createdAt: string;
  finishedAt?: string;
  /** When the current invocation took its step (ms): a running job whose step is older than PICKS_STALL_SECONDS has a dead worker. */
  stepAt?: number;
  step?: number;
  members: number;
  parts: Array<{ key: string; size: number }>;
  cursor?: Record<string, string>;
  resultKey?: string;
  error?: string;
}

export const requestKey = (clientId: string, jobId: string, step: number) => `${PICKS_REQUESTS_PREFIX}${clientId}/${jobId}/${step === 1 ? 'start' : `resume-${step}`}`;
export const partKey = (clientId: string, jobId: string, step: number) => `${PICKS_RESULTS_PREFIX}${clientId}/${jobId}/part-${String(step).padStart(4, '0')}.ndjson`;
export const resultKey = (clientId: string, jobId: string) => `${PICKS_RESULTS_PREFIX}${clientId}/${jobId}/picks.ndjson`;

/** The job of a request object (keys as S3 events give them, URL-encoded); undefined for anything else. */
export function jobOfKey(rawKey: string): { clientId: string; jobId: string } | undefined {
  const key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
  if (!key.startsWith(PICKS_REQUESTS_PREFIX)) return undefined;
  const match = /^([a-z0-9][a-z0-9_-]*)\/([A-Za-z0-9_-]{16})\/(start|resume-\d+)$/.exec(key.slice(PICKS_REQUESTS_PREFIX.length));
  return match ? { clientId: match[1], jobId: match[2] } : undefined;
}

export async function readJob(clientId: string, jobId: string): Promise<JobItem | undefined> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.picksJob(clientId, jobId), ConsistentRead: true }));
  const item = out.Item as (JobItem & { ttl?: number }) | undefined;
  // DynamoDB deletes expired items up to days late; the result file (S3 lifecycle) may be gone already.
  return item && !(typeof item.ttl === 'number' && item.ttl * 1000 <= Date.now()) ? item : undefined;
}
