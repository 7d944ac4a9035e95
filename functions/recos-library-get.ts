import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { librarySource } from '../shared/browser/library.generated.js';
import { recoRoutes } from '../shared/routes/recos.js';

export const handler = httpHandler(recoRoutes.libraryGet, () =>
  text(200, librarySource, 'application/javascript; charset=utf-8', { 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' }),
);
