/** Rows of the route table (shared/routes.ts): recommendation statistics (daily counts, A/B test results), a group of its own so its function bundles only these schemas. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { RecoDailySchema, RecoExperimentSchema, RecoStatsParamsSchema, RecoStatsQuerySchema } from '../stats/recos-schemas.js';

export const recoStatsRoutes = {
  // One row (one function) for both reports: the deployed stack is at CloudFormation's 500 resources, and each route adds 7.
  statsRecos: {
    method: 'GET',
    path: '/v1/stats/recommendations/{report}',
    handler: 'functions/stats-recos.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "Recommendation statistics of the client's blocks: `daily` counts per A/B variant, or a block's `experiment`",
    description:
      "`daily`: one row per UTC day, block and variant that has counts, from `from` to `to` (both included), by date, block and variant: `served` (requests answered), `impressions` (items shown), `clicks` (redirects followed with a `rid` of that variant), `ctr` = clicks / impressions (0 without impressions); `block_key` narrows to one block. " +
      "`experiment` (`block_key` required): the range's sums per variant (the block's configured variants, then any other counted: `default`, `newsletter`) with the CTR's Wilson score 95 % interval, and for each non-holdout variant, when the block has a holdout variant, the lift over it (CTR ratio minus 1) with a 95 % interval by the Katz log method; without a holdout no variant has `lift` and `method` says so. " +
      'Counted off the request path by the page-view consumer: a few seconds behind. Another client\'s `block_key`: 404.',
    tags: ['recommendations'],
    request: { params: RecoStatsParamsSchema, query: RecoStatsQuerySchema },
    responses: {
      200: { description: '`daily`: the rows; `experiment`: the test read per variant', schema: v.union([RecoDailySchema, RecoExperimentSchema]) },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: "`block_key` is not one of the caller's blocks", schema: ErrorSchema },
    },
  },
} as const satisfies Record<string, RouteDef>;
