import { authenticateToken } from '../shared/auth/authenticate.js';
import { config } from '../shared/config.js';
import { httpHandler } from '../shared/http/handler.js';
import { parseMediaType } from '../shared/http/media-type.js';
import { json, text } from '../shared/http/response.js';
import { getPicksJob, NDJSON } from '../shared/picks/jobs.js';
import { newsletterPicks } from '../shared/picks/service.js';
import { newsletterPicksRoutes } from '../shared/routes/newsletter-picks.js';

const noStore = { 'cache-control': 'private, no-store' };

export const handler = httpHandler(
  newsletterPicksRoutes.newsletterPicksGet,
  async ({ clientId, params, query, headers, event }) => {
    if (query.job) return json(200, await getPicksJob(clientId, params.list_id, query.block_key, query.job), noStore);
    const out = await newsletterPicks({ clientId, listId: params.list_id, blockKey: query.block_key, rows: query.rows, async: query.async, baseUrl: config.publicBaseUrl });
    if ('job' in out) return json(202, out.job, { location: `${event.rawPath}?${new URLSearchParams({ block_key: query.block_key, job: out.job.job_id })}` });
    const ndjson = (headers.accept ?? '').split(',').some((type) => parseMediaType(type)?.essence === NDJSON);
    if (ndjson) return text(200, out.lines.map((line) => `${JSON.stringify(line)}\n`).join(''), NDJSON, noStore);
    return json(200, out.lines, noStore);
  },
  authenticateToken,
);
