/** Job: webhook delivery messages (SQS batches) → signed POSTs, retries queued with backoff; answers an SQS partial batch response. */
import { jobHandler } from '../shared/observability/index.js';
import { deliverWebhooks } from '../shared/webhooks/deliver.js';

export const handler = jobHandler('webhooksDeliver', async (event: unknown) => deliverWebhooks(event));
