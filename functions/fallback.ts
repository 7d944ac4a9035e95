import { rawHttpHandler } from '../shared/http/handler.js';
import { redirect } from '../shared/http/response.js';
import { unmatchedError, withoutTrailingSlash } from '../shared/http/router.js';

export const handler = rawHttpHandler((event) => {
  const { method } = event.requestContext.http;
  const target = withoutTrailingSlash(method, event.rawPath);
  if (target) return redirect(event.rawQueryString ? `${target}?${event.rawQueryString}` : target, 308);
  throw unmatchedError(method, event.rawPath);
});
