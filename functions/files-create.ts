import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { idempotent } from '../shared/http/idempotency.js';
import { json } from '../shared/http/response.js';
import { importFromUrl } from '../shared/imports/create.js';
import { fileRoutes } from '../shared/routes/files.js';

export const handler = httpHandler(fileRoutes.filesCreate, idempotent(fileRoutes.filesCreate, async ({ clientId, body }) => {
  const file = await importFromUrl(clientId, body);
  return json(201, file, { location: `/v1/files/${file.id}` });
}), authenticateToken);
