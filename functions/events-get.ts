import { authenticateToken } from '../shared/auth/authenticate.js';
import { getEventFile } from '../shared/events/download.js';
import { s3EventStore } from '../shared/events/store.js';
import { httpHandler } from '../shared/http/handler.js';
import { redirect, text } from '../shared/http/response.js';
import { eventRoutes } from '../shared/routes/events.js';

const store = s3EventStore();

export const handler = httpHandler(eventRoutes.eventsGet, async ({ clientId, params, query }) => {
  const file = await getEventFile(store, clientId, params.event_name, params.date, new Date(), query.raw ? 'raw' : 'safe');
  const incomplete = { 'x-events-incomplete': String(!file.complete) };
  if ('url' in file) return redirect(file.url, 302, incomplete);
  return text(200, file.body, 'text/csv; charset=utf-8', {
    ...incomplete,
    'content-disposition': `attachment; filename="${file.filename}"`,
    'cache-control': file.complete ? 'private, max-age=300' : 'no-store',
  });
}, authenticateToken);
