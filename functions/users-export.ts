import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { exportReader } from '../shared/readers/export.js';
import { readerRoutes } from '../shared/routes/readers.js';

export const handler = httpHandler(readerRoutes.usersExport, async ({ clientId, query }) => {
  return json(200, await exportReader(clientId, query.email), { 'cache-control': 'no-store' });
}, authenticateToken);
