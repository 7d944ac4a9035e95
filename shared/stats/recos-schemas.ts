/** Request and response schemas of the recommendation statistics routes (shared/routes/stats-recos.ts). */
import * as v from 'valibot';
import { dateRangeChecks, dateRangeEntries } from './range.js';

const BlockKey = (what: string) => v.pipe(v.string('block_key is required'), v.minLength(1, 'block_key must not be empty'), v.maxLength(128, 'block_key must be at most 128 characters'), v.description(what));

/** The shared range checks, typed for a query with more fields than `from` and `to` (they read only those two). */
const rangeChecks = <T extends { from: string; to: string }>() => dateRangeChecks as unknown as readonly [v.CheckAction<T, string>, v.CheckAction<T, string>];

const StatsQuery = v.object({
  ...dateRangeEntries,
  block_key: v.optional(BlockKey("`daily`: only this block's rows; `experiment` (required): the block whose A/B test is read. One of the caller's blocks")),
});
export const RecoStatsQuerySchema = v.pipe(StatsQuery, ...rangeChecks<v.InferOutput<typeof StatsQuery>>());

export const RecoDailyRowSchema = v.object({
  date: v.pipe(v.string(), v.description('UTC day, YYYY-MM-DD')),
  block_key: v.string(),
  variant: v.string(),
  served: v.pipe(v.number(), v.description('Recommendation requests answered')),
  impressions: v.pipe(v.number(), v.description('Items shown in those answers')),
  clicks: v.pipe(v.number(), v.description('Redirects followed with a `rid` of this variant')),
  ctr: v.pipe(v.number(), v.description('clicks / impressions; 0 without impressions')),
});
export const RecoDailySchema = v.array(RecoDailyRowSchema);

const IntervalSchema = v.object({ lower: v.number(), upper: v.number() });

export const RecoExperimentSchema = v.object({
  block_key: v.string(),
  from: v.string(),
  to: v.string(),
  holdout: v.pipe(v.nullable(v.string()), v.description('The holdout variant the lifts are relative to; null when the block has none (then no variant has `lift`)')),
  method: v.pipe(v.string(), v.description('How the intervals are computed, or why there is no lift')),
  variants: v.array(
    v.object({
      variant: v.string(),
      holdout: v.boolean(),
      served: v.number(),
      impressions: v.number(),
      clicks: v.number(),
      ctr: v.number(),
      ctr_interval: v.pipe(v.nullable(IntervalSchema), v.description('Wilson score 95 % interval of the CTR; null without impressions')),
      lift: v.optional(
        v.pipe(
          v.nullable(v.object({ value: v.number(), lower: v.number(), upper: v.number() })),
          v.description('Non-holdout variants of a block with a holdout: CTR ratio to the holdout minus 1, 95 % interval by the Katz log method; null when either has no click'),
        ),
      ),
    }),
  ),
});
