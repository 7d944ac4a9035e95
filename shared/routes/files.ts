/** Rows of the route table (shared/routes.ts): event files and CSV imports. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { SETTLE_MINUTES } from '../events/days.js';
import { EventFileParamsSchema, EventFileQuerySchema } from '../events/schemas.js';
import { FileIdParamsSchema, ImportBodySchema, ImportedFileSchema } from '../imports/schemas.js';

export const fileRoutes = {
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
  filesCreate: {
    method: 'POST',
    path: '/v1/files',
    handler: 'functions/files-create.ts',
    auth: 'token',
    access: { table: 'RW', imports: 'RW' },
    summary: 'Import a CSV file by URL into a list',
    description:
      'Downloads the file (http/https only; private, loopback, link-local, CGNAT, multicast and metadata addresses refused, also after redirects; size and time limits IMPORT_MAX_BYTES, IMPORT_FETCH_TIMEOUT_MS), stores it and answers 201 with the imported file in status `uploaded`; a worker then applies it (`processing` → `done` | `failed`, see GET /v1/files/{file_id}).',
    tags: ['imports'],
    request: { body: ImportBodySchema },
    responses: {
      201: { description: 'The file is stored; processing continues asynchronously. Location: /v1/files/{file_id}', schema: ImportedFileSchema, headers: ['location'] },
      400: { description: 'Invalid body, or a URL that is refused or could not be fetched (`cause` starts with `url:`)', schema: ErrorSchema },
      401: errorResponses[401],
      404: { description: 'Unknown list', schema: ErrorSchema },
      415: errorResponses[415],
    },
    lambda: { timeoutSeconds: 29, memoryMb: 512 },
  },
  filesList: {
    method: 'GET',
    path: '/v1/files',
    handler: 'functions/files-list.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "The client's imported files with status and progress",
    tags: ['imports'],
    responses: { 200: { description: 'Imported files by id', schema: v.array(ImportedFileSchema) }, 401: errorResponses[401] },
  },
  filesGet: {
    method: 'GET',
    path: '/v1/files/{file_id}',
    handler: 'functions/files-get.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: 'One imported file with status, progress and its first errors',
    tags: ['imports'],
    request: { params: FileIdParamsSchema },
    responses: {
      200: { description: 'The imported file', schema: ImportedFileSchema },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'Unknown file', schema: ErrorSchema },
    },
  },
} as const satisfies Record<string, RouteDef>;
