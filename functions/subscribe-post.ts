import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { subscribe } from '../shared/optin/service.js';
import { optinRoutes } from '../shared/routes/optin.js';

export const handler = httpHandler(optinRoutes.subscribePost, async ({ params, body, sourceIp }) =>
  json(200, await subscribe(params.tracking_key, body, sourceIp), { 'cache-control': 'no-store' }),
);
