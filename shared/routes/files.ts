/** Rows of the route table (shared/routes.ts): event files (their own group, routes/events.ts) and CSV imports. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { FileIdParamsSchema, ImportBodySchema, ImportedFileSchema } from '../imports/schemas.js';
import { eventRoutes } from './events.js';

export const fileRoutes = {
  ...eventRoutes,
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
    idempotencyKey: true,
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
