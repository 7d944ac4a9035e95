import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { idempotent } from '../shared/http/idempotency.js';
import { json } from '../shared/http/response.js';
import { subscriberRoutes } from '../shared/routes/subscribers.js';
import { subscribeBatch } from '../shared/subscribers/service.js';

const route = subscriberRoutes.subscribersPost;

export const handler = httpHandler(
  route,
  idempotent(route, async ({ clientId, params, body }) => json(200, { report: await subscribeBatch(clientId, params.list_id, body) })),
  authenticateToken,
);
