import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json, nextPageHeaders } from '../shared/http/response.js';
import { withReaderLinks } from '../shared/readers/listing.js';
import { subscriberRoutes } from '../shared/routes/subscribers.js';
import { listSubscribers } from '../shared/subscribers/service.js';

export const handler = httpHandler(subscriberRoutes.subscribersList, async ({ clientId, params, query, event }) => {
  const page = await listSubscribers(clientId, params.list_id, query);
  return json(200, await withReaderLinks(clientId, params.list_id, page.subscribers), nextPageHeaders(event.rawPath, query, page.nextCursor));
}, authenticateToken);
