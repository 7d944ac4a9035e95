/** Job: SES event notifications (SNS topic → SQS queue → batches) → newsletter events and unsubscriptions; answers an SQS partial batch response. */
import { ingestSesEvents } from '../shared/events/ingest.js';
import { jobHandler } from '../shared/observability/index.js';

export const handler = jobHandler('sesEvents', async (event: unknown) => ingestSesEvents(event));
