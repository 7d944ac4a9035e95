import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { putBlockSettings } from '../shared/recos/block-settings.js';
import { blockRoutes } from '../shared/routes/blocks.js';

export const handler = httpHandler(blockRoutes.blocksPut, async ({ clientId, params, body }) => json(200, await putBlockSettings(clientId, params.block_key, body)), authenticateToken);
