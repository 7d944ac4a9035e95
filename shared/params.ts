import * as v from 'valibot';

/** An optional boolean query parameter: `true`/`1` or `false`/`0`. */
export const BoolParam = v.optional(
  v.pipe(
    v.picklist(['true', 'false', '1', '0'], 'must be true or false'),
    v.transform((s) => s === 'true' || s === '1'),
    v.boolean(),
  ),
);
