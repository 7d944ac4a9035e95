import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { webhookRoutes } from '../shared/routes/webhooks.js';
import { createWebhook } from '../shared/webhooks/service.js';

export const handler = httpHandler(webhookRoutes.webhooksCreate, async ({ clientId, body }) => {
  const hook = await createWebhook(clientId, body);
  return json(201, hook, { location: `/v1/webhooks/${hook.id}` });
}, authenticateToken);
