import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { recoStatsRoutes } from '../shared/routes/stats-recos.js';
import { experimentRecoStats } from '../shared/stats/recos-stats.js';

export const handler = httpHandler(
  recoStatsRoutes.statsRecosExperiment,
  async ({ clientId, query }) => json(200, await experimentRecoStats(clientId, query.block_key, query.from, query.to)),
  authenticateToken,
);
