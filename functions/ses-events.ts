/** Job: SES event notifications (SNS topic → SQS queue → batches) → newsletter events and unsubscriptions; answers an SQS partial batch response. */
import { ingestSesEvents } from '../shared/events/ingest.js';

export const handler = async (event: unknown) => ingestSesEvents(event);
