import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { subscribe } from '../shared/optin/service.js';
import { routes } from '../shared/routes.js';

export const handler = httpHandler(routes.subscribePost, async ({ params, body, sourceIp }) =>
  json(200, await subscribe(params.tracking_key, body, sourceIp), { 'cache-control': 'no-store' }),
);
