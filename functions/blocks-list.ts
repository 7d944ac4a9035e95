import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { clientBlocks } from '../shared/recos/block-settings.js';
import { blockRoutes } from '../shared/routes/blocks.js';

export const handler = httpHandler(blockRoutes.blocksList, async ({ clientId }) => json(200, await clientBlocks(clientId)), authenticateToken);
