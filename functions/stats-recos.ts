import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { recoStatsRoutes } from '../shared/routes/stats-recos.js';
import { dailyRecoStats, experimentRecoStats } from '../shared/stats/recos-stats.js';

export const handler = httpHandler(
  recoStatsRoutes.statsRecos,
  async ({ clientId, params, query }) =>
    json(200, params.report === 'daily' ? await dailyRecoStats(clientId, query.from, query.to, query.block_key) : await experimentRecoStats(clientId, query.block_key, query.from, query.to)),
  authenticateToken,
);
