import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { idempotent } from '../shared/http/idempotency.js';
import { json } from '../shared/http/response.js';
import { subscriberRoutes } from '../shared/routes/subscribers.js';
import { deleteUsers } from '../shared/subscribers/service.js';

export const handler = httpHandler(subscriberRoutes.usersDelete, idempotent(subscriberRoutes.usersDelete, async ({ clientId, body }) => {
  const deleted = await deleteUsers(clientId, body);
  return json(200, { success: `${deleted} users have been deleted` });
}), authenticateToken);
