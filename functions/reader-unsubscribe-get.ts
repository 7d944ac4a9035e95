import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { PAGE_HEADERS, unsubscribePage } from '../shared/readers/pages.js';
import { showUnsubscribe } from '../shared/readers/unsubscribe-page.js';
import { readerRoutes } from '../shared/routes/readers.js';

export const handler = httpHandler(readerRoutes.readerUnsubscribeGet, async ({ params, sourceIp }) => {
  const view = await showUnsubscribe(params, sourceIp);
  return text(view.state === 'invalid' ? 404 : 200, unsubscribePage(view), PAGE_HEADERS['content-type'], PAGE_HEADERS);
});
