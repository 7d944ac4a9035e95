/** Rows of the route table (shared/routes.ts): the event files download, a group of its own so that its function does not bundle the import routes. */
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { SETTLE_MINUTES } from '../events/days.js';
import { EventFileParamsSchema, EventFileQuerySchema } from '../events/schemas.js';

export const eventRoutes = {
  eventsGet: {
    method: 'GET',
    path: '/v1/newsletters/events/{event_name}/{date}',
    handler: 'functions/events-get.ts',
    auth: 'token',
    access: { table: 'R', events: 'RW' },
    summary: 'The CSV file of one event type and UTC day (premium)',
    description:
      `Header of spec §6, then one line per event sorted by date (UTC, YYYY-MM-DD HH:MM:SS). Today (and yesterday until 00:${String(SETTLE_MINUTES).padStart(2, '0')} UTC) is stitched from the hours the hourly job built plus the hours it has not reached yet (the current one), and marked \`X-Events-Incomplete: true\`. A day without events: the header line alone. Files above EVENTS_INLINE_MAX_BYTES: 302 to a presigned S3 URL valid EVENTS_URL_TTL_SECONDS. Cells are formula-safe by default (OWASP CSV injection: a leading apostrophe before \`=\`, \`+\`, \`-\`, \`@\`, tab, CR); \`raw=true\` asks for the values as recorded.`,
    tags: ['events'],
    request: { params: EventFileParamsSchema, query: EventFileQuerySchema },
    responses: {
      200: {
        description: 'The CSV file. Cells that would begin with `=`, `+`, `-`, `@`, tab or CR get a leading apostrophe so no spreadsheet evaluates them; `raw=true` serves the recorded values',
        contentType: 'text/csv; charset=utf-8',
        headers: ['x-events-incomplete', 'content-disposition', 'cache-control'],
      },
      302: { description: 'Large file: Location is a short-lived presigned S3 URL', headers: ['location', 'x-events-incomplete', 'cache-control'] },
      400: errorResponses[400],
      401: errorResponses[401],
      403: { description: 'Premium events not enabled for the client', schema: ErrorSchema },
    },
    // One full vCPU (Lambda's share grows with memory up to 1,769 MB): the hour of today assembled in the request is CPU-bound.
    lambda: { timeoutSeconds: 29, memoryMb: 1769 },
  },
} as const satisfies Record<string, RouteDef>;
