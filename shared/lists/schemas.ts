import * as v from 'valibot';
import { MAX_ID } from '../db/storable.js';

/** A list as returned by the API (spec 2.2). */
export const ListSchema = v.object({
  id: v.pipe(v.number(), v.integer()),
  name: v.string(),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
});
export type ListOutput = v.InferOutput<typeof ListSchema>;

export const ListIdParamsSchema = v.object({
  list_id: v.pipe(
    v.string(),
    v.regex(/^[1-9][0-9]{0,9}$/, 'list_id must be a positive integer'),
    v.transform(Number),
    v.number(),
    v.integer(),
    v.minValue(1),
    v.maxValue(MAX_ID),
  ),
});
