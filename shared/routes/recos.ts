/** Rows of the route table (shared/routes.ts): recommendations: tracking, blocks, redirects, preferences (their own group, routes/preferences.ts) and the browser library. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { BLOCK_KEY_CACHE_SECONDS, READ_CACHE_SECONDS } from '../recos/read-cache.js';
import { preferenceRoutes } from './preferences.js';
import { LegacyRecommendationsSchema, RecommendationsParamsSchema, RecommendationsQuerySchema, RedirectParamsSchema, RedirectQuerySchema, SmartSectionSchema, TrackBodySchema, TrackParamsSchema, TrackResultSchema } from '../recos/schemas.js';
import { MAX_PUBLISHED_MILLISECONDS, MAX_PUBLISHED_SECONDS } from '../recos/dates.js';

export const recoRoutes = {
  recosGet: {
    method: 'GET',
    path: '/v1/clients/{block_key}/users/{user_id}/recommendations',
    handler: 'functions/recos-get.ts',
    auth: 'key',
    // RW: the client's recommendation id secret is made by the first answer that needs it (one conditional write, once).
    access: { table: 'RW', trackingQueue: true },
    summary: "A reader's recommendations for a block (smart section)",
    description:
      `The page being read is \`page_url\`, else the \`referer\` header. \`format\` (else the block setting \`envelope\`) picks the smart-section envelope \`{result: {recommendation}, algo, status}\` or the earlier \`{count, start, recommendations}\`. \`callback\` returns JSONP (application/javascript). \`published_time\` is Unix seconds. At most 4 DynamoDB calls, 1 or 2 in a warm container (docs/architecture.md), and one SQS message (the answer counted for the block's statistics). Both envelopes carry \`recomm_id\` and \`variant\`: a block with an A/B test (setting \`variants\`) answers each reader with the same variant always (a stable hash of block key and reader id); a holdout variant answers the most-read list (\`algo: holdout:most-read\`). Article fields and popularity may be up to ${READ_CACHE_SECONDS} s old (copies kept by a warm container), the block's settings up to ${BLOCK_KEY_CACHE_SECONDS} s; a deleted article is never offered. The block's editorial rules apply (pins, exclusions: docs/api.md "Editorial rules"); smart-section items may carry \`reason\`.`,
    tags: ['recommendations'],
    request: { params: RecommendationsParamsSchema, query: RecommendationsQuerySchema },
    responses: {
      200: {
        description: 'Recommendations (JSON; with `callback`, JSONP: `callback(<the same JSON>);` as application/javascript)',
        schema: v.union([SmartSectionSchema, LegacyRecommendationsSchema]),
        alternatives: [{ contentType: 'application/javascript' }],
        headers: ['cache-control', 'x-content-type-options'],
      },
      400: errorResponses[400],
      403: { description: 'The client requires signed reader ids and `sig` is missing or wrong (JSON, also for JSONP requests)', schema: ErrorSchema },
      404: { description: 'Unknown block key', schema: ErrorSchema },
    },
  },
  trackPost: {
    method: 'POST',
    path: '/v1/track/{tracking_key}',
    handler: 'functions/track-post.ts',
    auth: 'key',
    access: { table: 'R', trackingQueue: true },
    summary: 'Record a page view (navigation tracking)',
    description:
      'JSON, or a form body (what the browser library sends with sendBeacon: no CORS preflight). `themes` is an array or a comma-separated string; `published_time` Unix seconds 0 to ' + `${MAX_PUBLISHED_SECONDS} (a larger number is milliseconds, up to ${MAX_PUBLISHED_MILLISECONDS}) or ISO 8601 up to 9999-12-31; title, description, category and themes are stored as plain text (markup and control characters removed).` + ' Asynchronous: the view is queued (two DynamoDB reads, one SQS message) and counts about 5 to 7 seconds later, when the consumer applies its batch; a view of a deleted article is accepted the same way and not counted.',
    tags: ['recommendations'],
    request: { params: TrackParamsSchema, body: TrackBodySchema, bodyTypes: ['json', 'form'] },
    responses: {
      200: { description: 'Accepted (queued); `guid` is the article id, from the URL', schema: TrackResultSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      403: { description: "The URL's host is not one of the client's site hosts (or the client has none yet), or the client requires signed reader ids and `sig` is missing or wrong", schema: ErrorSchema },
      404: { description: 'Unknown tracking key', schema: ErrorSchema },
      415: { description: 'Body neither JSON nor a form', schema: ErrorSchema },
    },
  },
  redirectGet: {
    method: 'GET',
    path: '/v1/r/{block_key}/{guid}',
    handler: 'functions/redirect-get.ts',
    auth: 'key',
    access: { table: 'RW', trackingQueue: true },
    summary: 'Follow a recommendation (counts the click, 302 to the article)',
    description: 'Leads only to a known article of the block\'s client on its site hosts (counted as a click); `https=1` upgrades the target to https. `rid` (the answer\'s `recomm_id` signed for this block and article) also counts the click in the block\'s statistics for its variant, once per answer and article (one conditional write, one SQS message); an unsigned, forged or repeated id counts nothing there.',
    tags: ['recommendations'],
    request: { params: RedirectParamsSchema, query: RedirectQuerySchema },
    responses: { 302: { description: 'To the article', headers: ['location', 'cache-control'] }, 400: errorResponses[400], 404: { description: 'Unknown block key or article', schema: ErrorSchema } },
  },
  ...preferenceRoutes,
  libraryGet: {
    method: 'GET',
    path: '/lib/v1',
    handler: 'functions/recos-library-get.ts',
    auth: 'none',
    access: {},
    summary: 'The browser library ({script_url}/v1)',
    tags: ['recommendations'],
    responses: { 200: { description: 'The library script', contentType: 'application/javascript; charset=utf-8', headers: ['cache-control', 'x-content-type-options'] } },
  },
} as const satisfies Record<string, RouteDef>;
