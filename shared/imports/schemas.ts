import * as v from 'valibot';
import { boundedInteger, MAX_ID } from '../db/storable.js';

/** Body of POST /v1/files (spec 4.3). */
export const ImportBodySchema = v.object({
  email_list_id: boundedInteger('email_list_id', 1, MAX_ID),
  url: v.pipe(v.string('url must be a string'), v.trim(), v.minLength(1, 'url is required'), v.maxLength(2048, 'url is longer than 2048 characters'), v.metadata({ openapi: { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', minLength: 1, maxLength: 2048 } })),
  update_list: v.optional(v.boolean('update_list must be true or false'), false),
});
export type ImportBodyInput = v.InferInput<typeof ImportBodySchema>;

export const FileIdParamsSchema = v.object({
  file_id: v.pipe(v.string(), v.regex(/^[1-9][0-9]{0,9}$/, 'file_id must be a positive integer'), v.transform(Number), v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_ID)),
});

const ErrorEntrySchema = v.object({ line: v.number(), email: v.nullable(v.string()), cause: v.string() });

/** The imported file (spec 2.7), then the progress fields this service adds (docs/api.md). */
export const ImportedFileSchema = v.object({
  id: v.pipe(v.number(), v.integer()),
  name: v.string(),
  url: v.string(),
  mediatype: v.string(),
  subtype: v.string(),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  size: v.pipe(v.number(), v.integer()),
  status: v.picklist(['uploaded', 'processing', 'done', 'failed']),
  email_list_id: v.pipe(v.number(), v.integer()),
  update_list: v.boolean(),
  updated_at: v.string(),
  finished_at: v.nullable(v.string()),
  failure_cause: v.nullable(v.string()),
  progress: v.object({
    lines_read: v.number(),
    created: v.number(),
    subscribed: v.number(),
    unsubscribed: v.number(),
    data_changed: v.number(),
    errors: v.number(),
    unsubscribed_absent: v.number(),
    update_list_skipped: v.nullable(v.string()),
  }),
  errors: v.array(ErrorEntrySchema),
});
