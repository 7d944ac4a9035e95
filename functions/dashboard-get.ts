import { randomBytes } from 'node:crypto';
import { dashboardScript, dashboardStyle, dashboardVersion } from '../shared/dashboard/bundle.generated.js';
import { dashboardCsp, dashboardPage } from '../shared/dashboard/page.js';
import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { dashboardRoutes } from '../shared/routes/dashboard.js';

const nosniff = { 'x-content-type-options': 'nosniff' };
/** The files are asked for with the bundle's version in the query: a day of caching is safe. */
const cached = { 'cache-control': 'public, max-age=86400', ...nosniff };

export const handler = httpHandler(dashboardRoutes.dashboardGet, ({ query }) => {
  if (query.file === 'app.js') return text(200, dashboardScript, 'application/javascript; charset=utf-8', cached);
  if (query.file === 'app.css') return text(200, dashboardStyle, 'text/css; charset=utf-8', cached);
  const nonce = randomBytes(16).toString('base64');
  // no-store: a kept copy would reuse its nonce.
  return text(200, dashboardPage(dashboardVersion, nonce), 'text/html; charset=utf-8', { 'cache-control': 'no-store', 'content-security-policy': dashboardCsp(nonce), 'x-frame-options': 'DENY', ...nosniff });
});
