import { issueToken } from '../shared/auth/tokens.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { authRoutes } from '../shared/routes/auth.js';

export const handler = httpHandler(authRoutes.tokenGet, async ({ query, sourceIp }) => {
  const { token } = await issueToken(query.username, query.password, sourceIp);
  return json(200, { token }, { 'cache-control': 'no-store' });
});
