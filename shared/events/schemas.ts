import * as v from 'valibot';
import { BoolParam } from '../params.js';
import { isCalendarDay } from './days.js';
import { eventNames } from './types.js';

/** Path of GET /v1/newsletters/events/{event_name}/{date} (spec 4.9). */
export const EventFileParamsSchema = v.object({
  event_name: v.picklist(eventNames, `event_name must be one of ${eventNames.join(', ')}`),
  date: v.pipe(
    v.string(),
    v.regex(/^\d{4}-\d{2}-\d{2}$/, 'date must be a day written YYYY-MM-DD'),
    v.check(isCalendarDay, 'date is not a calendar day'),
    v.metadata({ openapi: { type: 'string', format: 'date', pattern: '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$', description: 'The UTC day, YYYY-MM-DD' } }),
  ),
});
export type EventFileParamsInput = v.InferInput<typeof EventFileParamsSchema>;

/** Query of the same route: `raw=true` asks for the recorded values, without formula escaping. */
export const EventFileQuerySchema = v.object({ raw: BoolParam });
