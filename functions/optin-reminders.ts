import type { ScheduledEvent } from 'aws-lambda';
import { sendReminders } from '../shared/optin/service.js';

/** EventBridge schedule: reminders due at the event's time (a test or `npm run job` may pass another time). */
export const handler = async (event: Partial<ScheduledEvent> = {}) => {
  const now = event.time ? new Date(event.time) : new Date();
  const result = await sendReminders(Number.isNaN(now.getTime()) ? new Date() : now);
  console.log(JSON.stringify({ level: 'info', message: 'opt-in reminders', ...result }));
  return result;
};
