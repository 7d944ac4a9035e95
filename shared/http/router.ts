import { routeList } from '../routes.js';
import { compilePath } from './route.js';
import { MethodNotAllowedError, NotFoundError } from './errors.js';

const compiled = routeList.map((route) => ({ route, match: compilePath(route.path) }));

/** Finds the row for a method and path, with its path parameters. */
export function matchRoute(method: string, path: string) {
  for (const { route, match } of compiled) {
    if (route.method !== method) continue;
    const params = match(path);
    if (params) return { route, params };
  }
  return undefined;
}

/** The error for a request no row takes: 405 with Allow when the path exists, else 404. */
export function unmatchedError(method: string, path: string): NotFoundError | MethodNotAllowedError {
  const allow = compiled.filter(({ match }) => match(path)).map(({ route }) => route.method);
  if (allow.length > 0) return new MethodNotAllowedError(`Method ${method} is not allowed on ${path}; use ${allow.join(' or ')}`, allow);
  return new NotFoundError(`No route for ${method} ${path}`);
}

/**
 * Where a GET with a trailing slash goes when the path without it is a row
 * (`/dashboard/` → `/dashboard`): API Gateway routes cannot end with a slash.
 */
export function withoutTrailingSlash(method: string, path: string): string | undefined {
  if (method !== 'GET' || path.length < 2 || !path.endsWith('/')) return undefined;
  const trimmed = path.replace(/\/+$/, '');
  return trimmed && matchRoute('GET', trimmed) ? trimmed : undefined;
}
