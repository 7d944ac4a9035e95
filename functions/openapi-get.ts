import { httpHandler } from '../shared/http/handler.js';
import { openApiDocument } from '../shared/http/openapi.js';
import { json } from '../shared/http/response.js';
import { routes } from '../shared/routes.js';

export const handler = httpHandler(routes.openapiGet, async ({ headers }) =>
  json(200, openApiDocument(headers.host ? `${headers['x-forwarded-proto'] ?? 'https'}://${headers.host}` : undefined)),
);
