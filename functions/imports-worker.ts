import type { Context, S3Event } from 'aws-lambda';
import { handleUploadEvent } from '../shared/imports/worker.js';
import { jobHandler } from '../shared/observability/index.js';
import { jobOfKey } from '../shared/picks/job-items.js';
import { runPicksJob } from '../shared/picks/worker.js';

/**
 * S3 ObjectCreated under the uploads prefix: the stored file or a resume marker → one import run per record; a
 * newsletter-picks job's start or resume object (uploads/picks/) → one run of that job (its own function would pass
 * the stack's 500 resources: docs/operations.md).
 */
export const handler = jobHandler('importsWorker', async (event: S3Event, context: Context) => {
  const records = event.Records ?? [];
  const picks = records.flatMap((r) => jobOfKey(r.s3.object.key) ?? []);
  const imports = await handleUploadEvent({ ...event, Records: records.filter((r) => !jobOfKey(r.s3.object.key)) }, context);
  const runs = [];
  for (const job of picks) runs.push(await runPicksJob(job.clientId, job.jobId, () => context.getRemainingTimeInMillis()));
  return [...imports, ...runs];
});
