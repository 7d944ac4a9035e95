import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json, nextPageHeaders } from '../shared/http/response.js';
import { listArticles } from '../shared/recos/catalogue-list.js';
import { articleRoutes } from '../shared/routes/articles.js';

export const handler = httpHandler(articleRoutes.articlesGet, async ({ clientId, query, event }) => {
  const page = await listArticles(clientId, query);
  return json(200, page.articles, { 'cache-control': 'no-store', ...nextPageHeaders(event.rawPath, query, page.nextCursor) });
}, authenticateToken);
