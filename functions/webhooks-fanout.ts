/** Job: S3 notifications of new raw event objects (SQS batches) → changes on the event bus and webhook deliveries queued; answers an SQS partial batch response. */
import { jobHandler } from '../shared/observability/index.js';
import { fanOutChanges } from '../shared/webhooks/fanout.js';

export const handler = jobHandler('webhooksFanout', async (event: unknown) => fanOutChanges(event));
