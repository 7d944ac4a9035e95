/**
 * Functions that no HTTP route invokes: scheduled jobs, S3-triggered workers,
 * event ingesters. The CDK stack builds one function per row with its
 * trigger; locally `npm run job -- <id>` runs one now and timers run the
 * scheduled ones. Plain data only.
 */
import { keys } from './db/keys.js';
import type { Access } from './http/route.js';
import { UPLOADS_PREFIX } from './imports/objects.js';
import { PICKS_REQUESTS_PREFIX } from './picks/objects.js';

export type JobTrigger =
  /** EventBridge schedule expression, e.g. `cron(10 0 * * ? *)` (UTC). */
  | { schedule: string; localEveryMinutes?: number }
  /** An object created in the imports bucket under a prefix. */
  | { importsUpload: string }
  /**
   * SES event notifications: SES → SNS topic → SQS queue → the function in
   * batches (up to `batchSize` messages, gathered for up to
   * `maxBatchingWindowSeconds`), with partial batch responses; a message
   * received `maxReceiveCount` times goes to a dead-letter queue.
   */
  | { sesEventsQueue: { batchSize: number; maxBatchingWindowSeconds: number; maxReceiveCount: number } }
  /**
   * Page views queued by POST /v1/track (routes with `access.trackingQueue`): SQS → the function in batches, with
   * partial batch responses; a message received `maxReceiveCount` times goes to a dead-letter queue.
   */
  | { trackingQueue: { batchSize: number; maxBatchingWindowSeconds: number; maxConcurrency: number; maxReceiveCount: number } }
  /**
   * Objects created in the events bucket under `raw/` (subscriber changes among them): S3 notifications → an SQS
   * queue → the function in batches, with partial batch responses; a message received `maxReceiveCount` times goes
   * to a dead-letter queue.
   */
  | { eventChanges: { batchSize: number; maxBatchingWindowSeconds: number; maxConcurrency: number; maxReceiveCount: number } }
  /**
   * Webhook deliveries: an SQS queue (the jobs with `access.webhookQueue` send to it, retries with a delay) → the
   * function in batches, with partial batch responses; a message received `maxReceiveCount` times, or whose retries
   * are over, goes to the dead-letter queue.
   */
  | { webhookDeliveries: { batchSize: number; maxBatchingWindowSeconds: number; maxConcurrency: number; maxReceiveCount: number } }
  /**
   * The table's stream (NEW_AND_OLD_IMAGES) → the function through an event source mapping: records of items whose
   * sort key starts with `keyPrefix` (the mapping's filter), per shard in order, batches of up to `batchSize`
   * gathered for up to `maxBatchingWindowSeconds`, partial batch responses; a failed batch is bisected and retried
   * up to `maxRetryAttempts` times, then described on an on-failure queue.
   */
  | { tableStream: { keyPrefix: string; batchSize: number; maxBatchingWindowSeconds: number; maxRetryAttempts: number } }
  /** The async onFailure destination of another job (its retries exhausted); that job gets 2 retries. */
  | { asyncFailureOf: string };

export interface JobDef {
  handler: string;
  summary: string;
  access: Access;
  trigger: JobTrigger;
  timeoutSeconds?: number;
  memoryMb?: number;
  /**
   * `changes`: the results of its async invocations go to the change queue (a Lambda onSuccess destination), where
   * the job with the `eventChanges` trigger reads what finished (an import: `import.finished`). Nothing in the
   * function's own bundle.
   */
  successTo?: 'changes';
}

export const jobs = {
  optinReminders: {
    handler: 'functions/optin-reminders.ts',
    summary: 'Sends one reminder to pending opt-ins not confirmed after OPTIN_REMINDER_DAYS',
    access: { table: 'RW', mail: true },
    trigger: { schedule: 'rate(1 hour)', localEveryMinutes: 5 },
  },
  eventsAssemble: {
    handler: 'functions/events-assemble.ts',
    summary: 'Assembles the daily event CSV files (yesterday, plus late records of the 3 days before); {"date":"YYYY-MM-DD"} assembles one day',
    access: { table: 'RW', events: 'RW' },
    trigger: { schedule: 'cron(15 0 * * ? *)', localEveryMinutes: 60 },
    timeoutSeconds: 900,
    memoryMb: 1024,
  },
  eventsAssembleHours: {
    handler: 'functions/events-assemble-hours.ts',
    summary: "Assembles each closed hour of today's event files (both variants), so a download of today only assembles the last hour; rebuilds hours that late records changed",
    access: { table: 'RW', events: 'RW' },
    trigger: { schedule: 'cron(5 * * * ? *)', localEveryMinutes: 15 },
    timeoutSeconds: 900,
    memoryMb: 1024,
  },
  sesEvents: {
    handler: 'functions/ses-events.ts',
    summary: 'Records SES delivery events (send, open, click, bounce, complaint); hard bounces unsubscribe',
    access: { table: 'RW', events: 'W' },
    trigger: { sesEventsQueue: { batchSize: 1000, maxBatchingWindowSeconds: 120, maxReceiveCount: 5 } },
    timeoutSeconds: 180,
  },
  trackingViews: {
    handler: 'functions/tracking-views.ts',
    summary: 'Applies queued page views in batches: one update per article, reader and co-visit item of a batch, first views onto the fresh list',
    access: { table: 'RW' },
    // A 20 s window: at 50 views/s a batch still fills (1,000 views), and full batches take fewer write calls per view
    // (docs/benchmarks.md), for signals up to ≈ 25 s old; busier traffic fills a batch sooner (docs/architecture.md).
    trigger: { trackingQueue: { batchSize: 1000, maxBatchingWindowSeconds: 20, maxConcurrency: 10, maxReceiveCount: 5 } },
    // A full batch takes a fraction of this (its measured CPU and calls per view: docs/benchmarks.md); article updates not
    // started within a third of it are left for redelivery (batchDeadline, shared/recos/view-queue.ts).
    timeoutSeconds: 60,
  },
  subscribersStream: {
    handler: 'functions/subscribers-stream.ts',
    summary: "Derives the list counters, day statistics and raw subscriber events (nl_subscribe, nl_unsubscribe, nl_delete) from the table stream's subscriber records",
    access: { table: 'RW', events: 'W' },
    // A batch of 1,000 records is a few transactions and S3 puts: seconds, far within the timeout.
    trigger: { tableStream: { keyPrefix: keys.subscriberPrefix(), batchSize: 1000, maxBatchingWindowSeconds: 1, maxRetryAttempts: 10 } },
    timeoutSeconds: 120,
  },
  importsWorker: {
    handler: 'functions/imports-worker.ts',
    summary: 'Applies an uploaded CSV file to its list (resumes from its checkpoint; continues after a pause marker)',
    access: { table: 'RW', imports: 'RW', events: 'W' },
    trigger: { importsUpload: UPLOADS_PREFIX },
    successTo: 'changes',
    timeoutSeconds: 900,
    memoryMb: 1024,
  },
  newsletterPicksWorker: {
    handler: 'functions/newsletter-picks-worker.ts',
    summary: "Runs a newsletter-picks job (its start or resume object under picks/requests/): ranks the list's members page by page into NDJSON parts, then joins them into the result file (shared/picks/worker.ts)",
    access: { table: 'RW', imports: 'RW', trackingQueue: true },
    trigger: { importsUpload: PICKS_REQUESTS_PREFIX },
    timeoutSeconds: 900,
    memoryMb: 1024,
  },
  importsWorkerFailed: {
    handler: 'functions/imports-failed.ts',
    summary: 'Marks the files of an import worker event that failed all its attempts as failed, with the error as cause',
    access: { table: 'RW' },
    trigger: { asyncFailureOf: 'importsWorker' },
    successTo: 'changes',
    timeoutSeconds: 60,
  },
  importsSweeper: {
    handler: 'functions/imports-sweeper.ts',
    summary: 'Resumes imports whose worker died (lease run out) from their checkpoint, through a resume marker',
    access: { table: 'RW', imports: 'W' },
    trigger: { schedule: 'rate(2 minutes)', localEveryMinutes: 1 },
    timeoutSeconds: 60,
  },
  catalogueFeeds: {
    handler: 'functions/catalogue-feeds.ts',
    summary: "Polls each client's catalogue feed (RSS, Atom or news sitemap; conditional requests) and upserts its articles",
    access: { table: 'RW' },
    trigger: { schedule: 'rate(10 minutes)', localEveryMinutes: 1 },
    timeoutSeconds: 300,
  },
  webhooksFanout: {
    handler: 'functions/webhooks-fanout.ts',
    summary: 'Reads each new raw event object of subscriber changes (S3 notification), puts the changes on the event bus and queues one delivery per webhook that wants them',
    // table R: webhooks and the imported files whose end it announces.
    access: { table: 'R', events: 'R', eventBus: true, webhookQueue: true },
    trigger: { eventChanges: { batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 5, maxReceiveCount: 5 } },
    timeoutSeconds: 60,
  },
  webhooksDeliver: {
    handler: 'functions/webhooks-deliver.ts',
    summary: 'POSTs signed change events to webhooks in order; failures retried with backoff for about a day (same webhook-id), then dead-lettered',
    access: { table: 'R', webhookQueue: true },
    trigger: { webhookDeliveries: { batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 20, maxReceiveCount: 5 } },
    // No POST starts after WEBHOOK_SLICE_MS (5 s), and each ends within WEBHOOK_TIMEOUT_MS (10 s).
    timeoutSeconds: 60,
  },
} as const satisfies Record<string, JobDef>;

export type JobId = keyof typeof jobs;

export const jobList: Array<JobDef & { id: JobId }> = (Object.entries(jobs) as Array<[JobId, JobDef]>).map(([id, job]) => ({ id, ...job }));
