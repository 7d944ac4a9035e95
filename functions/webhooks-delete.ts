import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { webhookRoutes } from '../shared/routes/webhooks.js';
import { deleteWebhook } from '../shared/webhooks/store.js';

export const handler = httpHandler(
  webhookRoutes.webhooksDelete,
  async ({ clientId, params }) => {
    await deleteWebhook(clientId, params.webhook_id);
    return { statusCode: 204, headers: {}, body: '' };
  },
  authenticateToken,
);
