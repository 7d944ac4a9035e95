import type { ScheduledEvent } from 'aws-lambda';
import { jobHandler, logger } from '../shared/observability/index.js';
import { sendReminders } from '../shared/optin/service.js';

/** EventBridge schedule: reminders due at the event's time (a test or `npm run job` may pass another time). */
export const handler = jobHandler('optinReminders', async (event: Partial<ScheduledEvent> | undefined) => {
  const now = event?.time ? new Date(event.time) : new Date();
  const result = await sendReminders(Number.isNaN(now.getTime()) ? new Date() : now);
  logger.info('opt-in reminders', result);
  return result;
});
