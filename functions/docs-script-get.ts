import { readAsset } from '../shared/http/assets.js';
import { REDOC_SCRIPT } from '../shared/http/docs-page.js';
import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { docRoutes } from '../shared/routes/docs.js';

const script = readAsset(REDOC_SCRIPT.name, REDOC_SCRIPT.packagePath);

export const handler = httpHandler(docRoutes.docsScriptGet, () =>
  text(200, script, 'application/javascript; charset=utf-8', { 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }),
);
