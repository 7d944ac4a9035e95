import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { getImportedFile } from '../shared/imports/files.js';
import { fileRoutes } from '../shared/routes/files.js';

export const handler = httpHandler(fileRoutes.filesGet, async ({ clientId, params }) => json(200, await getImportedFile(clientId, params.file_id)), authenticateToken);
