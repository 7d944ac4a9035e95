import { API_REFERENCE_CSP, apiReferencePage } from '../shared/http/docs-page.js';
import { httpHandler } from '../shared/http/handler.js';
import { text } from '../shared/http/response.js';
import { docRoutes } from '../shared/routes/docs.js';

export const handler = httpHandler(docRoutes.docsGet, () =>
  text(200, apiReferencePage(), 'text/html; charset=utf-8', { 'cache-control': 'public, max-age=300', 'content-security-policy': API_REFERENCE_CSP }),
);
