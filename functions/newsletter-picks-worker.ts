import type { Context, S3Event } from 'aws-lambda';
import { jobOfKey, runPicksJob } from '../shared/picks/jobs.js';
import { jobHandler } from '../shared/observability/index.js';

/** S3 ObjectCreated under picks/requests/ (a job's start or resume object) → one run of that job per record. */
export const handler = jobHandler('newsletterPicksWorker', async (event: S3Event, context: Context) => {
  const runs = [];
  for (const record of event.Records ?? []) {
    const job = jobOfKey(record.s3.object.key);
    if (job) runs.push(await runPicksJob(job.clientId, job.jobId, () => context.getRemainingTimeInMillis()));
  }
  return runs;
});
