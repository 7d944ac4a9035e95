import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { getPreferences } from '../shared/recos/service.js';
import { preferenceRoutes } from '../shared/routes/preferences.js';

export const handler = httpHandler(preferenceRoutes.preferencesGet, async ({ clientId, params, query }) => {
  const p = await getPreferences(clientId, params.user_id, query.sig);
  return json(200, { user_id: p.userId, themes: p.themes, updated_at: p.updatedAt }, { 'cache-control': 'no-store' });
}, authenticateToken);
