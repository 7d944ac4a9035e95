import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { statsRoutes } from '../shared/routes/stats.js';
import { eventsDaily } from '../shared/stats/events-daily.js';

export const handler = httpHandler(statsRoutes.statsEventsDaily, async ({ clientId, query }) => json(200, await eventsDaily(clientId, query)), authenticateToken);
