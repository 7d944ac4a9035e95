/** Rows of the route table (shared/routes.ts): newsletter picks, the recommendations of every member of a list. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { ListIdParamsSchema } from '../lists/schemas.js';
import { PicksJobSchema, PicksLineSchema, PicksQuerySchema } from '../picks/schemas.js';

export const newsletterPicksRoutes = {
  newsletterPicksGet: {
    method: 'GET',
    path: '/v1/newsletters/lists/{list_id}/recommendations',
    handler: 'functions/newsletter-picks-get.ts',
    auth: 'token',
    access: { table: 'RW', imports: 'RW', trackingQueue: true },
    summary: "Every subscribed member's recommendations for a block (newsletter picks)",
    description:
      "For each subscribed member of the list (by email), the block's ranking for the reader whose id is the member's `guid`, with no current page: articles the reader already read are left out. Links are the block's redirects with `rid=newsletter.<16 base64url>.<tag>`: an id per member derived from the request's `rid`, signed for the article, so each member's first click of an article counts for the newsletter; the picks listed count as its impressions (one SQS message per page of members). A JSON array, or NDJSON (one member per line) with `Accept: application/x-ndjson`. Lists with more than PICKS_DIRECT_MAX_MEMBERS subscribed members (default 3,000) or more than 15,000 picks (members × rows), answers that would pass 5 MB or 18 s, and `async=true` answer 202 with a job (Location: this path with `?block_key=<block_key>&job=<job_id>`); that URL answers the job (200: status, progress and, once done, `result_url`, a presigned URL of one NDJSON object). docs/api.md \"Newsletter picks\", docs/capacity.md.",
    tags: ['recommendations'],
    request: { params: ListIdParamsSchema, query: PicksQuerySchema },
    responses: {
      200: {
        description: 'The members and their picks: a JSON array, or NDJSON when asked (the schema of application/x-ndjson is each line\'s); with `job`, the job',
        schema: v.union([v.array(PicksLineSchema), PicksJobSchema]),
        alternatives: [{ contentType: 'application/x-ndjson', schema: PicksLineSchema }],
        headers: ['cache-control'],
      },
      202: { description: 'A job makes the picks; Location: /v1/newsletters/lists/{list_id}/recommendations?block_key={block_key}&job={job_id}', schema: PicksJobSchema, headers: ['location'] },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: "Unknown list, a block key that is not the client's, or (with `job`) no such job of this list and block (jobs are kept 7 days)", schema: ErrorSchema },
      429: { description: 'A job would be needed and the client started PICKS_JOBS_PER_HOUR (default 10) this hour; Retry-After gives the seconds to wait', schema: ErrorSchema, headers: ['retry-after'] },
    },
    lambda: { timeoutSeconds: 29, memoryMb: 1024 },
  },
} as const satisfies Record<string, RouteDef>;
