import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { listLists } from '../shared/lists/lists.js';
import { subscriberRoutes } from '../shared/routes/subscribers.js';

export const handler = httpHandler(subscriberRoutes.listsList, async ({ clientId }) => json(200, await listLists(clientId)), authenticateToken);
