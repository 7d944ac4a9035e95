import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { subscriberRoutes } from '../shared/routes/subscribers.js';
import { defaultListOf, deprecationHeaders } from '../shared/subscribers/legacy.js';
import { countSubscribers } from '../shared/subscribers/service.js';

export const handler = httpHandler(subscriberRoutes.legacySubscribersCount, async ({ clientId }) => {
  const listId = await defaultListOf(clientId);
  return json(200, await countSubscribers(clientId, listId), deprecationHeaders(listId, 'count'));
}, authenticateToken);
