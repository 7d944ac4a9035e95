/** Job: queued page views (SQS batches) → articles, readers, co-visits and the fresh list; answers an SQS partial batch response before its timeout. */
import { jobHandler } from '../shared/observability/index.js';
import { applyQueuedViews } from '../shared/recos/service.js';

export const handler = jobHandler('trackingViews', async (event: unknown, context) => applyQueuedViews(event, context.getRemainingTimeInMillis()));
