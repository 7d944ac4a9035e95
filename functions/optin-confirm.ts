import { httpHandler } from '../shared/http/handler.js';
import { redirect, text } from '../shared/http/response.js';
import { PUBLISHER_PAGE_CSP } from '../shared/clients/publisher-html.js';
import { confirmationPage } from '../shared/optin/email.js';
import { confirm } from '../shared/optin/service.js';
import { optinRoutes } from '../shared/routes/optin.js';

const noStore = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-robots-tag': 'noindex' };

export const handler = httpHandler(optinRoutes.optinConfirm, async ({ params, sourceIp, headers }) => {
  const result = await confirm(params.token, new Date(), { ip: sourceIp, userAgent: headers['user-agent'] });
  if (result.outcome !== 'invalid' && result.redirectUrl) return redirect(result.redirectUrl, 302, noStore);
  const page = confirmationPage(result.outcome, result.publisher);
  return text(page.status, page.html, 'text/html; charset=utf-8', { ...noStore, 'content-security-policy': PUBLISHER_PAGE_CSP });
});
