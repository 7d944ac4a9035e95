import { config } from '../shared/config.js';
import { httpHandler } from '../shared/http/handler.js';
import { json, text } from '../shared/http/response.js';
import { jsonp } from '../shared/recos/envelope.js';
import { recommendations } from '../shared/recos/service.js';
import { recoRoutes } from '../shared/routes/recos.js';

const noStore = { 'cache-control': 'private, no-store' };

export const handler = httpHandler(recoRoutes.recosGet, async ({ params, query, headers, event }) => {
  const body = await recommendations({
    blockKey: params.block_key,
    userId: params.user_id,
    sig: query.sig,
    rows: query.rows,
    start: query.start,
    shuffle: query.shuffle,
    redirHttps: query.redir_https,
    noredir: query.noredir,
    format: query.format,
    pageUrl: query.page_url,
    referer: headers.referer,
    rawQueryString: event.rawQueryString,
    baseUrl: config.publicBaseUrl,
  });
  if (query.callback) {
    return text(200, jsonp(query.callback, body), 'application/javascript; charset=utf-8', { ...noStore, 'x-content-type-options': 'nosniff' });
  }
  return json(200, body, noStore);
});
