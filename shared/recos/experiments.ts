/**
 * A/B tests of a block (block setting `variants`): which variant answers a
 * reader, what that variant changes in the ranking, and the `recomm_id` that
 * ties an answer's clicks back to its variant. Pure functions (unit-tested in
 * test/unit/recos-experiments.test.ts).
 */
import { createHash } from 'node:crypto';
import type { BlockSettings, Variant, Weights } from './types.js';

/** The variant of answers of a block without a test, and of readers outside every variant's share. */
export const DEFAULT_VARIANT = 'default';
/** The variant of newsletter picks. */
export const NEWSLETTER_VARIANT = 'newsletter';
/** Variant names the service gives itself: never a configured variant's name. */
export const RESERVED_VARIANTS: readonly string[] = [DEFAULT_VARIANT, NEWSLETTER_VARIANT];

/** A configured variant's name: 1 to 32 letters, digits, `_` or `-`. */
export const VARIANT_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/** The `algo` of a holdout variant's answers. */
export const HOLDOUT_ALGO = 'holdout:most-read';

/** The control's blend: popularity alone (the block's most-read list). */
export const HOLDOUT_WEIGHTS: Weights = { covisit: 0, content: 0, preferences: 0, popularity: 1, freshness: 0 };

/**
 * The reader's point in [0, 100): the first 32 bits of SHA-256(block key,
 * user id), scaled. The same reader of a block always has the same point;
 * another block draws another one, so tests of two blocks are independent.
 */
export function bucketOf(blockKey: string, userId: string): number {
  const digest = createHash('sha256').update(blockKey).update('\0').update(userId).digest();
  return (digest.readUInt32BE(0) / 2 ** 32) * 100;
}

/**
 * The variant answering a reader: the variants take consecutive slices of
 * [0, 100) of their `share` in their stored order; a point past the last
 * slice (shares adding to less than 100) is the block's own settings
 * (undefined: variant `default`). Variants with a reserved or malformed name
 * are skipped (their share goes to `default`).
 */
export function assignVariant(blockKey: string, userId: string, variants: readonly Variant[]): Variant | undefined {
  if (variants.length === 0) return undefined;
  const point = bucketOf(blockKey, userId);
  let upper = 0;
  for (const variant of variants) {
    if (!configurable(variant.name)) continue;
    upper += variant.share;
    if (point < upper) return variant;
  }
  return undefined;
}

const configurable = (name: string) => VARIANT_NAME.test(name) && !RESERVED_VARIANTS.includes(name.toLowerCase());

/**
 * The settings one answer ranks with: a variant's `weights` override the
 * block's; a holdout ranks by popularity alone (the block's other rules,
 * leaving out the current page, excluded and read articles, still apply).
 */
export function variantSettings(settings: BlockSettings, variant: Variant | undefined): BlockSettings {
  if (!variant) return settings;
  if (variant.holdout) return { ...settings, weights: HOLDOUT_WEIGHTS };
  if (!variant.weights) return settings;
  return { ...settings, weights: { ...settings.weights, ...variant.weights } };
}

export { newRecommId } from './recomm-ids.js';

/**
 * The variant a signed click is counted for: its variant when that is one of
 * the block's configured variants, `default` or `newsletter`; undefined for
 * anything else.
 */
export function countedVariant(variant: string | undefined, variants: readonly Variant[]): string | undefined {
  if (variant === undefined) return undefined;
  if (RESERVED_VARIANTS.includes(variant)) return variant;
  return variants.some((v) => v.name === variant && configurable(v.name)) ? variant : undefined;
}
