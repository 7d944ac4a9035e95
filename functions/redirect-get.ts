import { httpHandler } from '../shared/http/handler.js';
import { redirect } from '../shared/http/response.js';
import { clickTarget } from '../shared/recos/service.js';
import { recoRoutes } from '../shared/routes/recos.js';

export const handler = httpHandler(recoRoutes.redirectGet, async ({ params, query }) =>
  redirect(await clickTarget(params.block_key, params.guid, query.https ?? false, query.rid)),
);
