import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { recoStatsRoutes } from '../shared/routes/stats-recos.js';
import { dailyRecoStats } from '../shared/stats/recos-stats.js';

export const handler = httpHandler(
  recoStatsRoutes.statsRecosDaily,
  async ({ clientId, query }) => json(200, await dailyRecoStats(clientId, query.from, query.to, query.block_key)),
  authenticateToken,
);
