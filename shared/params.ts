import * as v from 'valibot';

/** An optional boolean query parameter: `true`/`1` or `false`/`0`. */
export const BoolParam = v.optional(
  v.pipe(
    v.picklist(['true', 'false', '1', '0'], 'must be true or false'),
    v.transform((s) => s === 'true' || s === '1'),
    v.boolean(),
  ),
);

/** An optional integer query parameter from `min` to `max` (at most 6 digits), with causes that say which bound. */
export function IntParam(min: number, max: number, description?: string) {
  const int = v.pipe(
    v.string(),
    v.regex(/^\d{1,6}$/, 'must be a non-negative integer'),
    v.transform(Number),
    v.number(),
    v.integer(),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
  return v.optional(description === undefined ? int : v.pipe(int, v.description(description)));
}
