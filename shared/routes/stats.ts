/** Rows of the route table (shared/routes.ts): daily statistics of lists and events (issue 25). */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { ListIdParamsSchema } from '../lists/schemas.js';
import { EventsDaySchema, ListDaySchema } from '../stats/schemas.js';
import { DateRangeQuerySchema, MAX_RANGE_DAYS } from '../stats/range.js';

export const statsRoutes = {
  statsListsDaily: {
    method: 'GET',
    path: '/v1/stats/lists/{list_id}/daily',
    handler: 'functions/stats-lists-daily.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "A list's subscriptions, unsubscriptions by cause and subscriber count per UTC day",
    description:
      `One entry per day of \`from\`..\`to\` (UTC, both included, at most ${MAX_RANGE_DAYS} days), oldest first. ` +
      '`subscribed` / `unsubscribed`: addresses that became subscribed / subscribed addresses that became unsubscribed that day, by any path (API, deprecated API, import, opt-in confirmation, reader links, bounces and complaints); `causes` splits `unsubscribed` by the cause stored. ' +
      "`subscribers`: the list's subscribed count at the end of the day; today's is the count right now (equal to `…/subscribers/count`). " +
      'Exact and current: counted in the same transaction as the list counters. Days before the list existed are zeros.',
    tags: ['statistics'],
    request: { params: ListIdParamsSchema, query: DateRangeQuerySchema },
    responses: {
      200: { description: 'One entry per day, oldest first', schema: v.array(ListDaySchema) },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'Unknown list', schema: ErrorSchema },
    },
  },
  statsEventsDaily: {
    method: 'GET',
    path: '/v1/stats/events/daily',
    handler: 'functions/stats-events-daily.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "The client's events per type and UTC day",
    description:
      `One entry per day of \`from\`..\`to\` (UTC, both included, at most ${MAX_RANGE_DAYS} days), oldest first, with the count of each of the seven event types. ` +
      "A day's counts are the rows of its event files once the daily job built them (shortly after midnight UTC); before that (today) the rows of the hours the hourly job built: " +
      'today lags by up to about an hour (the current hour and the last closed one until the job reaches it).',
    tags: ['statistics'],
    request: { query: DateRangeQuerySchema },
    responses: {
      200: { description: 'One entry per day, oldest first', schema: v.array(EventsDaySchema) },
      400: errorResponses[400],
      401: errorResponses[401],
    },
  },
} as const satisfies Record<string, RouteDef>;
