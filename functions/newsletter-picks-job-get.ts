import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { getPicksJob } from '../shared/picks/jobs.js';
import { newsletterPicksRoutes } from '../shared/routes/newsletter-picks.js';

export const handler = httpHandler(
  newsletterPicksRoutes.newsletterPicksJobGet,
  async ({ clientId, params }) => json(200, await getPicksJob(clientId, params.job_id), { 'cache-control': 'private, no-store' }),
  authenticateToken,
);
