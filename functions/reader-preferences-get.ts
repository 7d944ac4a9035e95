import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { PAGE_HEADERS, preferencesPage } from '../shared/readers/pages.js';
import { showPreferences } from '../shared/readers/preferences-page.js';
import { readerRoutes } from '../shared/routes/readers.js';

export const handler = httpHandler(readerRoutes.readerPreferencesGet, async ({ params, sourceIp }) => {
  const view = await showPreferences(params, sourceIp);
  return text(view === 'invalid' ? 404 : 200, preferencesPage(view), PAGE_HEADERS['content-type'], PAGE_HEADERS);
});
