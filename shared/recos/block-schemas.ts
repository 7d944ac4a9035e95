/** Schemas of the block settings routes (shared/routes/blocks.ts): the OpenAPI document and the response contract. */
import * as v from 'valibot';
import { MAX_FRESHNESS_HOURS, MAX_ROWS_CEILING } from './settings.js';

/** Longest lists (and texts) of a block's settings. */
export const BLOCK_LIMITS = { pins: 20, excludedUrls: 1000, excludedCategories: 100, variants: 10, hosts: 50, categories: 100, name: 100, category: 200 } as const;

const PublicKeySchema = v.pipe(v.string(), v.minLength(1), v.maxLength(128));
export const BlockKeyParamsSchema = v.object({ block_key: PublicKeySchema });

const weight = v.pipe(v.number(), v.minValue(0), v.maxValue(100));
const WeightsSchema = v.object({ covisit: weight, content: weight, preferences: weight, popularity: weight, freshness: weight });
const PartialWeightsSchema = v.partial(WeightsSchema);
const until = v.pipe(v.number(), v.integer(), v.description('Unix seconds'));
const VariantSchema = v.object({
  name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,32}$/), v.description('Not `default` nor `newsletter` (reserved, in any case); unique in the block regardless of case')),
  share: v.pipe(v.number(), v.minValue(0), v.maxValue(100), v.description('Percent of readers; the shares add up to at most 100')),
  weights: v.optional(PartialWeightsSchema),
  holdout: v.optional(v.pipe(v.boolean(), v.description('Answers the control (the most-read list); at most one per block'))),
});

/** The settings of a block with defaults applied, as answered. */
export const BlockSchema = v.object({
  block_key: v.string(),
  created_at: v.optional(v.string()),
  settings: v.object({
    name: v.optional(v.string()),
    rows: v.number(),
    max_rows: v.number(),
    max_age_days: v.number(),
    freshness_hours: v.number(),
    envelope: v.picklist(['smart-section', 'legacy']),
    weights: WeightsSchema,
    hosts: v.nullable(v.array(v.string())),
    category_display: v.record(v.string(), v.string()),
    pins: v.array(v.object({ url: v.string(), position: v.number(), until: v.optional(until) })),
    exclude: v.object({ urls: v.array(v.string()), categories: v.array(v.string()) }),
    variants: v.array(VariantSchema),
  }),
});

/**
 * `PUT /v1/blocks/{block_key}` as documented (every field optional: a JSON merge of the given top-level settings;
 * `null` resets one to its default). The handler checks only that the body is an object: the service validates
 * each setting with a cause naming it (shared/recos/block-settings.ts).
 */
export const BlockSettingsBodyDoc = v.partial(
  v.object({
    name: v.pipe(v.string(), v.maxLength(BLOCK_LIMITS.name)),
    rows: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_ROWS_CEILING)),
    max_rows: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_ROWS_CEILING)),
    max_age_days: v.pipe(v.number(), v.minValue(0.01), v.maxValue(3650)),
    freshness_hours: v.pipe(v.number(), v.minValue(0), v.maxValue(MAX_FRESHNESS_HOURS)),
    envelope: v.picklist(['smart-section', 'legacy']),
    weights: PartialWeightsSchema,
    hosts: v.pipe(v.array(v.string()), v.maxLength(BLOCK_LIMITS.hosts)),
    category_display: v.record(v.string(), v.string()),
    pins: v.pipe(
      v.array(
        v.object({
          url: v.pipe(v.string(), v.description("Absolute http(s) URL on the client's site hosts; stored canonical")),
          position: v.pipe(v.number(), v.integer(), v.minValue(1), v.description('1 to max_rows; unique')),
          until: v.optional(v.union([until, v.pipe(v.string(), v.description('ISO 8601'))])),
        }),
      ),
      v.maxLength(BLOCK_LIMITS.pins),
    ),
    exclude: v.object({
      urls: v.optional(v.pipe(v.array(v.string()), v.maxLength(BLOCK_LIMITS.excludedUrls))),
      categories: v.optional(v.pipe(v.array(v.string()), v.maxLength(BLOCK_LIMITS.excludedCategories))),
    }),
    variants: v.pipe(v.array(VariantSchema), v.maxLength(BLOCK_LIMITS.variants)),
  }),
);

/** What the handler itself checks: a JSON object (the service validates the settings). */
export const BlockSettingsBodySchema = v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), 'must be a JSON object of block settings');
