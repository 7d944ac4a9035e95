import { httpHandler } from '../shared/http/handler.js';
import { openApiDocument } from '../shared/http/openapi.js';
import { json } from '../shared/http/response.js';
import { docRoutes } from '../shared/routes/docs.js';

export const handler = httpHandler(docRoutes.openapiGet, () => json(200, openApiDocument()));
