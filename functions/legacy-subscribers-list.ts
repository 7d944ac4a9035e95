import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json, nextPageHeaders } from '../shared/http/response.js';
import { withReaderLinks } from '../shared/readers/listing.js';
import { subscriberRoutes } from '../shared/routes/subscribers.js';
import { defaultListOf, deprecationHeaders } from '../shared/subscribers/legacy.js';
import { listSubscribers } from '../shared/subscribers/service.js';

export const handler = httpHandler(subscriberRoutes.legacySubscribersList, async ({ clientId, query, event }) => {
  const listId = await defaultListOf(clientId);
  const page = await listSubscribers(clientId, listId, query);
  return json(200, await withReaderLinks(clientId, listId, page.subscribers), { ...deprecationHeaders(listId, 'subscribers'), ...nextPageHeaders(event.rawPath, query, page.nextCursor) });
}, authenticateToken);
