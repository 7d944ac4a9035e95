import { dashboardScript, dashboardStyle, dashboardVersion } from '../shared/dashboard/bundle.generated.js';
import { DASHBOARD_CSP, dashboardPage } from '../shared/dashboard/page.js';
import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { dashboardRoutes } from '../shared/routes/dashboard.js';

const page = dashboardPage(dashboardVersion);
const nosniff = { 'x-content-type-options': 'nosniff' };
/** The files are asked for with the bundle's version in the query: a day of caching is safe. */
const cached = { 'cache-control': 'public, max-age=86400', ...nosniff };

export const handler = httpHandler(dashboardRoutes.dashboardGet, ({ query }) => {
  if (query.file === 'app.js') return text(200, dashboardScript, 'application/javascript; charset=utf-8', cached);
  if (query.file === 'app.css') return text(200, dashboardStyle, 'text/css; charset=utf-8', cached);
  return text(200, page, 'text/html; charset=utf-8', { 'cache-control': 'no-cache', 'content-security-policy': DASHBOARD_CSP, ...nosniff });
});
