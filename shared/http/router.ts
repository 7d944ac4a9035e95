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
