import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { listImportedFiles } from '../shared/imports/files.js';
import { fileRoutes } from '../shared/routes/files.js';

export const handler = httpHandler(fileRoutes.filesList, async ({ clientId }) => json(200, await listImportedFiles(clientId)), authenticateToken);
