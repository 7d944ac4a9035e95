import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { webhookRoutes } from '../shared/routes/webhooks.js';
import { listWebhooks } from '../shared/webhooks/service.js';

export const handler = httpHandler(webhookRoutes.webhooksList, async ({ clientId }) => json(200, await listWebhooks(clientId)), authenticateToken);
