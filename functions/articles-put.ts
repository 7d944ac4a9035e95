import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { putArticles } from '../shared/recos/catalogue.js';
import { articleRoutes } from '../shared/routes/articles.js';

export const handler = httpHandler(articleRoutes.articlesPut, async ({ clientId, body }) => json(200, await putArticles(clientId, body), { 'cache-control': 'no-store' }), authenticateToken);
