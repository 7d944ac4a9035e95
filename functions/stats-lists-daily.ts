import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { statsRoutes } from '../shared/routes/stats.js';
import { listDaily } from '../shared/stats/lists-daily.js';

export const handler = httpHandler(
  statsRoutes.statsListsDaily,
  async ({ clientId, params, query }) => json(200, await listDaily(clientId, params.list_id, query)),
  authenticateToken,
);
