/**
 * The newsletter-picks request (GET /v1/newsletters/lists/{list_id}/recommendations): a list small enough answers
 * directly, within API Gateway's bounds (29 s, 6 MB); a larger one, or `async=true`, becomes a job (jobs.ts) whose
 * result is one NDJSON object in S3. docs/capacity.md "Newsletter picks" has the measured rates behind the bounds.
 */
import { config } from '../config.js';
import { subscribedCount } from '../subscribers/index.js';
import { createPicksJob, type PicksJobView } from './jobs.js';
import { planPicks, runPicks, type PicksLine } from './picks.js';

/**
 * A direct answer holds at most this many picks (members × rows): at the benchmark's ≈ 260 bytes a pick (2,588 bytes
 * a member with 10 rows, docs/capacity.md) ≈ 3.9 MB, room for longer texts under DIRECT_MAX_BYTES. Larger lists go to
 * a job at once, instead of after an answer that outgrows the response.
 */
export const DIRECT_MAX_PICKS = 15_000;
/** A direct answer stops growing past this many bytes of lines (the function's response holds 6 MB) and becomes a job. */
export const DIRECT_MAX_BYTES = 5_000_000;
/** A direct answer stops after this long (API Gateway ends the request at 29 s) and becomes a job. */
export const DIRECT_BUDGET_MS = 18_000;
/** Members ranked per page of a direct answer: the byte and time bounds are checked this often. */
const DIRECT_PAGE_MEMBERS = 100;

export interface PicksRequest {
  clientId: string;
  listId: number;
  blockKey: string;
  rows?: number;
  async?: boolean;
  baseUrl: string;
}

/** The lines of every subscribed member, or the job that will write them. */
export async function newsletterPicks(q: PicksRequest): Promise<{ lines: PicksLine[] } | { job: PicksJobView }> {
  const plan = await planPicks(q.clientId, q.listId, q.blockKey, q.rows);
  const directMax = Math.min(config.picksDirectMaxMembers, Math.floor(DIRECT_MAX_PICKS / plan.rows));
  if (q.async || (await subscribedCount(q.clientId, q.listId)) > directMax) return { job: await createPicksJob(plan) };
  const started = Date.now();
  const lines: PicksLine[] = [];
  let bytes = 0;
  const run = await runPicks(plan, {
    baseUrl: q.baseUrl,
    pageMembers: DIRECT_PAGE_MEMBERS,
    emit: (page) => {
      lines.push(...page);
      for (const line of page) bytes += Buffer.byteLength(JSON.stringify(line)) + 1;
    },
    stop: () => bytes > DIRECT_MAX_BYTES || Date.now() - started > DIRECT_BUDGET_MS,
  });
  // Too large or too slow for a direct answer after all (many rows, long texts): the job makes all of it.
  if (run.nextKey) return { job: await createPicksJob(plan) };
  return { lines };
}
