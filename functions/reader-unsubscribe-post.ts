import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { formFields } from '../shared/http/form-body.js';
import { notAFormPage, PAGE_HEADERS, unsubscribePage } from '../shared/readers/pages.js';
import { isOneClick, unsubscribeByLink } from '../shared/readers/unsubscribe.js';
import { readerRoutes } from '../shared/routes/readers.js';

const page = (status: number, html: string) => text(status, html, PAGE_HEADERS['content-type'], PAGE_HEADERS);

export const handler = httpHandler(readerRoutes.readerUnsubscribePost, async ({ params, sourceIp, headers, event }) => {
  if (!isOneClick(formFields(event))) return page(400, notAFormPage('The request body must be List-Unsubscribe=One-Click (RFC 8058).'));
  const view = await unsubscribeByLink(params, { ip: sourceIp, userAgent: headers['user-agent'] });
  return page(view.state === 'invalid' ? 404 : 200, unsubscribePage(view));
});
