import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { trackView } from '../shared/recos/service.js';
import { recoRoutes } from '../shared/routes/recos.js';

export const handler = httpHandler(recoRoutes.trackPost, async ({ params, body, headers }) => {
  const article = await trackView(params.tracking_key, body, headers.origin);
  return json(200, { status: 'OK', guid: article.guid }, { 'cache-control': 'no-store' });
});
