import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { idempotent } from '../shared/http/idempotency.js';
import { json } from '../shared/http/response.js';
import { subscriberRoutes } from '../shared/routes/subscribers.js';
import { deprecationHeaders, legacySubscribe } from '../shared/subscribers/legacy.js';

export const handler = httpHandler(subscriberRoutes.legacySubscribersPost, idempotent(subscriberRoutes.legacySubscribersPost, async ({ clientId, body }) => {
  const { listId, count, report } = await legacySubscribe(clientId, body);
  return json(200, { success: `${count} subscriber(s) processed`, report }, deprecationHeaders(listId, 'subscribers'));
}), authenticateToken);
