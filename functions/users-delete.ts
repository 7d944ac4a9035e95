import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { routes } from '../shared/routes.js';
import { deleteUsers } from '../shared/subscribers/service.js';

export const handler = httpHandler(routes.usersDelete, async ({ clientId, body }) => {
  const deleted = await deleteUsers(clientId, body);
  return json(200, { success: `${deleted} users have been deleted` });
}, authenticateToken);
