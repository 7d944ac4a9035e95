/**
 * Runs the functions of the job table locally: `npm run job -- <id> [event JSON]`
 * runs one now (against the stack `npm start` runs); `npm start` also runs
 * the scheduled ones on timers.
 */
import type { Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { jobList, type JobDef } from '../../shared/jobs.js';
import { useOutboxMailer } from '../../shared/mail/outbox-mailer.js';
import { loggedInvoke } from './console.js';
import { inFunction } from './recording.js';
import { sendTo } from './notifications.js';

// Locally, MAIL_TRANSPORT=outbox writes .eml files (the Lambdas only know SES).
useOutboxMailer();

const root = resolve(import.meta.dirname, '../..');

/** A job invocation's context (its remaining time: see lambdaContext in gateway.ts). */
export function context(id: string, timeoutSeconds: number): Context {
  // A duration, on the monotonic clock (the wall clock may be simulated: see lambdaContext in gateway.ts).
  const deadline = performance.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: id,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${id}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${id}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.round(deadline - performance.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Invokes a job's real handler with an event, as Lambda would. */
export async function invokeJob(job: JobDef & { id: string }, event: unknown): Promise<unknown> {
  const mod = (await import(pathToFileURL(resolve(root, job.handler)).href)) as { handler: (e: unknown, c: Context) => Promise<unknown> };
  return inFunction(job.id, () => mod.handler(event, context(job.id, job.timeoutSeconds ?? 900)));
}

/**
 * Invokes a job as an async invocation (S3 does): with `successTo: 'changes'` its result then goes to the local
 * change queue (CHANGES_QUEUE_URL) as Lambda's onSuccess destination sends it in AWS.
 */
export async function invokeAsync(job: JobDef & { id: string }, event: unknown): Promise<unknown> {
  const result = await invokeJob(job, event);
  const queueUrl = process.env.CHANGES_QUEUE_URL;
  if (job.successTo === 'changes' && queueUrl) {
    const record = {
      version: '1.0',
      timestamp: new Date().toISOString(),
      requestContext: { requestId: randomUUID(), functionArn: `arn:aws:lambda:local:000000000000:function:${job.id}:$LATEST`, condition: 'Success', approximateInvokeCount: 1 },
      requestPayload: event,
      responseContext: { statusCode: 200, executedVersion: '$LATEST' },
      responsePayload: result,
    };
    await sendTo(queueUrl, JSON.stringify(record));
  }
  return result;
}

/** An EventBridge scheduled event, as the schedule rule sends it. */
export function scheduledEvent(time = new Date()): Record<string, unknown> {
  return { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', time: time.toISOString(), region: 'local', resources: [], detail: {} };
}

/**
 * Starts timers for the scheduled jobs; returns a function that stops them.
 * Each job also runs once right away: whatever fell due while `npm start` was
 * not running (reminders, yesterday's event files, imports whose worker was
 * killed) is done at start, not one interval later.
 */
export function startScheduledJobs(log: (line: string) => void = console.log, { catchUpAfterMs = 2_000 } = {}): () => void {
  const invoke = loggedInvoke(invokeJob, log);
  const run = (job: JobDef & { id: string }) => invoke(job, scheduledEvent()).catch(() => undefined);
  const timers = jobList.flatMap((job) => {
    if (!('schedule' in job.trigger) || !job.trigger.localEveryMinutes) return [];
    return [setTimeout(() => void run(job), catchUpAfterMs), setInterval(() => void run(job), job.trigger.localEveryMinutes * 60_000)];
  });
  return () => timers.forEach((t) => clearTimeout(t));
}

/**
 * S3 notifications, locally: each object the emulator reports created
 * under a job's `importsUpload` prefix invokes that job with the record, as
 * the stack's bucket notification does in AWS. Runs in the background.
 */
export function startUploadJobs(emulator: { onEvent(listener: (event: unknown) => void): void }, log: (line: string) => void = console.log): void {
  emulator.onEvent((event) => {
    const records = (event as { Records?: Array<{ eventName: string; s3: { object: { key: string } } }> }).Records ?? [];
    for (const record of records) {
      if (!record.eventName.startsWith('ObjectCreated')) continue;
      for (const job of jobList) {
        if (!('importsUpload' in job.trigger) || !record.s3.object.key.startsWith(job.trigger.importsUpload)) continue;
        loggedInvoke(invokeAsync, log)(job, { Records: [record] }).catch(() => undefined);
      }
    }
  });
}
