import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { formFields } from '../shared/http/form-body.js';
import { notAFormPage, PAGE_HEADERS, preferencesPage } from '../shared/readers/pages.js';
import { savePreferences } from '../shared/readers/preferences.js';
import { readerRoutes } from '../shared/routes/readers.js';

const page = (status: number, html: string) => text(status, html, PAGE_HEADERS['content-type'], PAGE_HEADERS);

export const handler = httpHandler(readerRoutes.readerPreferencesPost, async ({ params, sourceIp, headers, event }) => {
  const fields = formFields(event);
  if (!fields) return page(400, notAFormPage('The request body must be the form of this page.'));
  const view = await savePreferences(params, fields, { ip: sourceIp, userAgent: headers['user-agent'] });
  return page(view === 'invalid' ? 404 : 200, preferencesPage(view));
});
