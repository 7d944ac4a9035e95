/**
 * Recommendation statistics of a client's blocks: daily counts per block and
 * variant, and a block's A/B test read as CTRs with intervals and lifts over
 * the holdout. The counters are written off the request path by the
 * page-view consumer (shared/recos/reco-counts.ts); these read them.
 */
import { resolvePublicKey } from '../clients/clients.js';
import { readRecoCounts, type DailyRecoCounts } from '../recos/dynamo-reco-counts.js';
import { InvalidRecosRequestError, UnknownBlockKeyError } from '../recos/errors.js';
import { blockSettings } from '../recos/settings.js';
import type { Variant } from '../recos/types.js';
import { ratioInterval, wilsonInterval, type Interval } from './recos-intervals.js';

/** One row of the daily statistics. */
export interface DailyRecoRow {
  date: string;
  block_key: string;
  variant: string;
  served: number;
  impressions: number;
  clicks: number;
  /** clicks / impressions; 0 without impressions. */
  ctr: number;
}

/** At most 1: a click counts once per answer and article shown, but may fall on a later day than its impression. */
const ctrOf = (clicks: number, impressions: number) => (impressions > 0 ? Math.min(clicks, impressions) / impressions : 0);

/** The block's variants when it is the client's; another client's or an unknown block is UnknownBlockKeyError (one GetItem). */
async function blockVariants(clientId: string, blockKey: string): Promise<Variant[]> {
  const key = await resolvePublicKey('block', blockKey);
  if (!key || key.clientId !== clientId) throw new UnknownBlockKeyError(blockKey);
  return blockSettings(key, undefined).variants;
}

/**
 * The client's counters from `from` to `to` (UTC days, both included), one
 * row per day, block and variant that has any, by date, block and variant;
 * only `blockKey`'s when given (which must be one of the client's blocks).
 */
export async function dailyRecoStats(clientId: string, from: string, to: string, blockKey?: string): Promise<DailyRecoRow[]> {
  const [counts] = await Promise.all([readRecoCounts(clientId, from, to), blockKey ? blockVariants(clientId, blockKey) : undefined]);
  return counts
    .filter((c) => blockKey === undefined || c.blockKey === blockKey)
    .sort((a, b) => (a.day !== b.day ? (a.day < b.day ? -1 : 1) : a.blockKey !== b.blockKey ? (a.blockKey < b.blockKey ? -1 : 1) : a.variant < b.variant ? -1 : a.variant > b.variant ? 1 : 0))
    .map((c) => ({ date: c.day, block_key: c.blockKey, variant: c.variant, served: c.served, impressions: c.impressions, clicks: c.clicks, ctr: ctrOf(c.clicks, c.impressions) }));
}

/** A lift over the holdout: relative CTR difference (ratio − 1) and its 95 % interval; null when a count is 0. */
export interface Lift {
  value: number;
  lower: number;
  upper: number;
}

export interface VariantResult {
  variant: string;
  holdout: boolean;
  served: number;
  impressions: number;
  clicks: number;
  ctr: number;
  /** Wilson score 95 % interval of the CTR; null without impressions. */
  ctr_interval: Interval | null;
  /** Non-holdout variants when the block has a holdout: the lift over it (null when either has no click or impression). */
  lift?: Lift | null;
}

export interface ExperimentResult {
  block_key: string;
  from: string;
  to: string;
  /** The holdout variant the lifts are relative to; null when the block has none. */
  holdout: string | null;
  /** How the intervals are computed, or why there is no lift. */
  method: string;
  variants: VariantResult[];
}

export const CTR_METHOD = 'CTR interval: Wilson score (95 %).';
export const LIFT_METHOD = 'Lift: CTR ratio to the holdout minus 1, interval by the Katz log method for a ratio of proportions (95 %).';
export const NO_HOLDOUT = 'The block has no holdout variant: no lift is computed.';

/** Sums of counts per variant. */
function perVariant(counts: DailyRecoCounts[]): Map<string, { served: number; impressions: number; clicks: number }> {
  const out = new Map<string, { served: number; impressions: number; clicks: number }>();
  for (const c of counts) {
    const s = out.get(c.variant) ?? { served: 0, impressions: 0, clicks: 0 };
    s.served += c.served;
    s.impressions += c.impressions;
    s.clicks += c.clicks;
    out.set(c.variant, s);
  }
  return out;
}

/**
 * A block's A/B test over `from`..`to`: per variant (the block's configured
 * variants, then any other counted: `default`, `newsletter`, variants since
 * removed) served, impressions, clicks, CTR with its Wilson interval, and for
 * each non-holdout variant the lift over the (first) holdout variant with its
 * Katz log interval. Another client's or an unknown block: UnknownBlockKeyError;
 * none: InvalidRecosRequestError.
 */
export async function experimentRecoStats(clientId: string, blockKey: string | undefined, from: string, to: string): Promise<ExperimentResult> {
  if (blockKey === undefined) throw new InvalidRecosRequestError('query.block_key: is required by the experiment report');
  const [variants, counts] = await Promise.all([blockVariants(clientId, blockKey), readRecoCounts(clientId, from, to)]);
  const sums = perVariant(counts.filter((c) => c.blockKey === blockKey));
  const holdout = variants.find((v) => v.holdout)?.name ?? null;
  const configured = variants.map((v) => v.name);
  const names = [...new Set([...configured, ...[...sums.keys()].sort()])];
  const control = holdout ? sums.get(holdout) : undefined;
  const results = names.map((name): VariantResult => {
    const s = sums.get(name) ?? { served: 0, impressions: 0, clicks: 0 };
    const isHoldout = variants.some((v) => v.name === name && v.holdout === true);
    const clicked = Math.min(s.clicks, s.impressions);
    const out: VariantResult = { variant: name, holdout: isHoldout, ...s, ctr: ctrOf(s.clicks, s.impressions), ctr_interval: wilsonInterval(clicked, s.impressions) ?? null };
    if (holdout && !isHoldout) {
      const r = control ? ratioInterval(clicked, s.impressions, Math.min(control.clicks, control.impressions), control.impressions) : undefined;
      out.lift = r ? { value: r.ratio - 1, lower: r.lower - 1, upper: r.upper - 1 } : null;
    }
    return out;
  });
  return { block_key: blockKey, from, to, holdout, method: holdout ? `${CTR_METHOD} ${LIFT_METHOD}` : `${CTR_METHOD} ${NO_HOLDOUT}`, variants: results };
}
