/** Rows of the route table (shared/routes.ts): newsletter picks, the recommendations of every member of a list. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { ListIdParamsSchema } from '../lists/schemas.js';
import { PicksJobParamsSchema, PicksJobSchema, PicksLineSchema, PicksQuerySchema } from '../picks/schemas.js';

export const newsletterPicksRoutes = {
  newsletterPicksGet: {
    method: 'GET',
    path: '/v1/newsletters/lists/{list_id}/recommendations',
    handler: 'functions/newsletter-picks-get.ts',
    auth: 'token',
    access: { table: 'RW', imports: 'RW' },
    summary: "Every subscribed member's recommendations for a block (newsletter picks)",
    description:
      "For each subscribed member of the list (by email), the block's ranking for the reader whose id is the member's `guid`, with no current page: articles the reader already read are left out. Links are the block's redirects with `rid=newsletter.<16 base64url>`, one rid per request, so clicks count for the newsletter. A JSON array, or NDJSON (one member per line) with `Accept: application/x-ndjson`. Lists with more than PICKS_DIRECT_MAX_MEMBERS subscribed members (default 2,000), answers that would pass 5 MB or 18 s, and `async=true` answer 202 with a job: its result is one NDJSON object reached by a presigned URL (GET /v1/newsletters/recommendations/jobs/{job_id}). docs/api.md \"Newsletter picks\", docs/capacity.md.",
    tags: ['recommendations'],
    request: { params: ListIdParamsSchema, query: PicksQuerySchema },
    responses: {
      200: {
        description: 'The members and their picks: a JSON array, or NDJSON when asked',
        schema: v.array(PicksLineSchema),
        alternatives: [{ contentType: 'application/x-ndjson' }],
        headers: ['cache-control'],
      },
      202: { description: 'A job makes the picks; Location: /v1/newsletters/recommendations/jobs/{job_id}', schema: PicksJobSchema, headers: ['location'] },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: "Unknown list, or a block key that is not the client's", schema: ErrorSchema },
    },
    lambda: { timeoutSeconds: 29, memoryMb: 1024 },
  },
  newsletterPicksJobGet: {
    method: 'GET',
    path: '/v1/newsletters/recommendations/jobs/{job_id}',
    handler: 'functions/newsletter-picks-job-get.ts',
    auth: 'token',
    access: { table: 'R', imports: 'R' },
    summary: 'A newsletter-picks job: status, progress and, when done, the URL of its NDJSON result',
    tags: ['recommendations'],
    request: { params: PicksJobParamsSchema },
    responses: {
      200: { description: 'The job', schema: PicksJobSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'Unknown job (or older than 7 days)', schema: ErrorSchema },
    },
  },
} as const satisfies Record<string, RouteDef>;
