import type { Context, S3Event } from 'aws-lambda';
import { jobHandler } from '../shared/observability/index.js';
import { jobOfKey } from '../shared/picks/job-items.js';
import { runPicksJob } from '../shared/picks/worker.js';

/** S3 ObjectCreated under picks/requests/: a newsletter-picks job's start or resume object → one run of that job. */
export const handler = jobHandler('newsletterPicksWorker', async (event: S3Event, context: Context) => {
  const runs = [];
  for (const job of (event.Records ?? []).flatMap((r) => jobOfKey(r.s3.object.key) ?? [])) {
    runs.push(await runPicksJob(job.clientId, job.jobId, () => context.getRemainingTimeInMillis()));
  }
  return runs;
});
