import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { subscriberRoutes } from '../shared/routes/subscribers.js';
import { countSubscribers } from '../shared/subscribers/service.js';

export const handler = httpHandler(
  subscriberRoutes.subscribersCount,
  async ({ clientId, params }) => json(200, await countSubscribers(clientId, params.list_id)),
  authenticateToken,
);
