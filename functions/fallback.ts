import { rawHttpHandler } from '../shared/http/handler.js';
import { unmatchedError } from '../shared/http/router.js';

export const handler = rawHttpHandler((event) => {
  throw unmatchedError(event.requestContext.http.method, event.rawPath);
});
