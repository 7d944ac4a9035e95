import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { librarySource } from '../shared/browser/library.generated.js';
import { routes } from '../shared/routes.js';

export const handler = httpHandler(routes.libraryGet, async () =>
  text(200, librarySource, 'application/javascript; charset=utf-8', { 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' }),
);
