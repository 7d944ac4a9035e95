/** Answers of the statistics routes (schemas only: the route rows import them, so no storage code comes along). */
import * as v from 'valibot';
import { eventNames, type EventName } from '../events/types.js';

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const ListDaySchema = v.object({
  date: v.pipe(v.string(), v.description('The UTC day, YYYY-MM-DD')),
  subscribed: v.pipe(Count, v.description('Addresses that became subscribed that day (new or resubscribed), by any path')),
  unsubscribed: v.pipe(Count, v.description('Subscribed addresses that became unsubscribed that day, by any path')),
  causes: v.pipe(
    v.object({ READER: Count, PUBLISHER: Count, HARD_BOUNCE: Count }),
    v.description('`unsubscribed` by cause (the unsubscribed_cause stored: READER, PUBLISHER, HARD_BOUNCE; complaints are READER)'),
  ),
  subscribers: v.pipe(Count, v.description("The list's subscribed count at the end of the day (today: now)")),
});
export type ListDay = v.InferOutput<typeof ListDaySchema>;

export const EventsDaySchema = v.object({
  date: v.pipe(v.string(), v.description('The UTC day, YYYY-MM-DD')),
  counts: v.pipe(
    v.object(Object.fromEntries(eventNames.map((e) => [e, Count])) as Record<EventName, typeof Count>),
    v.description("Rows of the day's file of each event type (the day's assembled hours while its file is not built)"),
  ),
});
export type EventsDay = v.InferOutput<typeof EventsDaySchema>;
