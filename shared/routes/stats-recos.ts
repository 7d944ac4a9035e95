/** Rows of the route table (shared/routes.ts): recommendation statistics (daily counts, A/B test results), a group of its own so their functions bundle only these schemas. */
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { RecoDailySchema, RecoExperimentSchema, RecoStatsQuerySchema } from '../stats/recos-schemas.js';

const counted = 'Counted off the request path by the page-view consumer: a few seconds behind.';

export const recoStatsRoutes = {
  statsRecosDaily: {
    method: 'GET',
    path: '/v1/stats/recommendations/daily',
    handler: 'functions/stats-recos-daily.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "Recommendation statistics of the client's blocks per UTC day and A/B variant",
    description:
      "One row per UTC day, block and variant that has counts, from `from` to `to` (both included), by date, block and variant: `served` (requests answered), `impressions` (items shown), `clicks` (redirects followed with a `rid` of that variant), `ctr` = clicks / impressions (0 without impressions); `block_key` narrows to one block (another client's: 404). " +
      counted,
    tags: ['recommendations'],
    request: { query: RecoStatsQuerySchema },
    responses: {
      200: { description: 'The rows', schema: RecoDailySchema },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: "`block_key` is not one of the caller's blocks", schema: ErrorSchema },
    },
  },
  statsRecosExperiment: {
    method: 'GET',
    path: '/v1/stats/recommendations/experiment',
    handler: 'functions/stats-recos-experiment.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "A block's A/B test over a range of days: CTR per variant with intervals, lift over the holdout",
    description:
      "`block_key` required (another client's: 404): the range's sums per variant (the block's configured variants, then any other counted: `default`, `newsletter`) with the CTR's Wilson score 95 % interval, and for each non-holdout variant, when the block has a holdout variant, the lift over it (CTR ratio minus 1) with a 95 % interval by the Katz log method; without a holdout no variant has `lift` and `method` says so. " +
      counted,
    tags: ['recommendations'],
    request: { query: RecoStatsQuerySchema },
    responses: {
      200: { description: 'The test read per variant', schema: RecoExperimentSchema },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: "`block_key` is not one of the caller's blocks", schema: ErrorSchema },
    },
  },
} as const satisfies Record<string, RouteDef>;
