import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { clientBlock } from '../shared/recos/block-settings.js';
import { blockRoutes } from '../shared/routes/blocks.js';

export const handler = httpHandler(blockRoutes.blocksGet, async ({ clientId, params }) => json(200, await clientBlock(clientId, params.block_key)), authenticateToken);
