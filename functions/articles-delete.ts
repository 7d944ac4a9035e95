import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { deleteArticle } from '../shared/recos/catalogue.js';
import { articleRoutes } from '../shared/routes/articles.js';

export const handler = httpHandler(articleRoutes.articlesDelete, async ({ clientId, query }) => json(200, { status: 'OK', ...(await deleteArticle(clientId, query.url)) }, { 'cache-control': 'no-store' }), authenticateToken);
