import * as v from 'valibot';
import { IntParam } from '../params.js';

/** Most picks per member; without `rows`, the block's `rows` setting up to this. */
export const MAX_PICKS_ROWS = 20;

export const PicksQuerySchema = v.object({
  job: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{16}$/, 'must be a job id'), v.description('A job of this list and block (the Location of a 202): answers the job instead; `rows` and `async` are not needed'))),
  block_key: v.pipe(v.string(), v.minLength(1, 'must be a block key'), v.maxLength(128, 'must be a block key'), v.description("A block key of the caller's client: its ranking, hosts and redirects (with `job`: the job's block)")),
  rows: IntParam(1, MAX_PICKS_ROWS, `Picks per member, 1 to ${MAX_PICKS_ROWS}; default the block's \`rows\` (at most ${MAX_PICKS_ROWS})`),
  async: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((s) => s === 'true'),
      v.description('true: always answer 202 with a job, whatever the size of the list'),
    ),
  ),
});

export const PickSchema = v.object({
  guid: v.string(),
  url: v.pipe(v.string(), v.description("`{recos_url}/v1/r/<block_key>/<guid>?rid=newsletter.<16 base64url>.<tag>`: the redirect with the member's signed id, its first click counted as a click of the newsletter")),
  title: v.string(),
  desc: v.string(),
  image: v.string(),
  category: v.string(),
  published_time: v.pipe(v.number(), v.description('Unix seconds')),
});

export const PicksLineSchema = v.object({
  email: v.string(),
  guid: v.pipe(v.string(), v.description("The member's guid: the reader id of navigation tracking")),
  recommendations: v.array(PickSchema),
});

export const PicksJobSchema = v.object({
  job_id: v.string(),
  status: v.picklist(['queued', 'running', 'done', 'failed']),
  list_id: v.number(),
  block_key: v.string(),
  rows: v.number(),
  rid: v.pipe(v.string(), v.description("The request's recomm_id; each member's links carry an id derived from it and the member")),
  members: v.pipe(v.number(), v.description('Members written so far')),
  created_at: v.string(),
  finished_at: v.nullable(v.string()),
  result_url: v.pipe(v.nullable(v.string()), v.description('When done: a presigned URL (PICKS_URL_TTL_SECONDS) of the NDJSON result, one member per line')),
  error: v.nullable(v.string()),
});
