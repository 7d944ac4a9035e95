import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { importFromUrl } from '../shared/imports/create.js';
import { routes } from '../shared/routes.js';

export const handler = httpHandler(routes.filesCreate, async ({ clientId, body }) => {
  const file = await importFromUrl(clientId, body);
  return json(201, file, { location: `/v1/files/${file.id}` });
}, authenticateToken);
