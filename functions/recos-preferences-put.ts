import { authenticateToken } from '../shared/auth/authenticate.js';
import { httpHandler } from '../shared/http/handler.js';
import { json } from '../shared/http/response.js';
import { setPreferences } from '../shared/recos/service.js';
import { preferenceRoutes } from '../shared/routes/preferences.js';

export const handler = httpHandler(preferenceRoutes.preferencesPut, async ({ clientId, params, query, body }) => {
  const p = await setPreferences(clientId, params.user_id, query.sig, body.themes);
  return json(200, { user_id: p.userId, themes: p.themes, updated_at: p.updatedAt }, { 'cache-control': 'no-store' });
}, authenticateToken);
