import { httpHandler } from '../shared/http/handler.js';
import { openApiDocument } from '../shared/http/openapi.js';
import { json } from '../shared/http/response.js';
import { routes } from '../shared/routes.js';

export const handler = httpHandler(routes.openapiGet, async () => json(200, openApiDocument()));
