/** Job: SES event notifications (through the stack's SNS topic) → newsletter events and hard-bounce unsubscriptions. */
import { ingestSesEvents } from '../shared/events/ingest.js';

export const handler = async (event: unknown) => ingestSesEvents(event);
