/** Rows of the route table (shared/routes.ts): the publisher dashboard, a static page of this API (docs/operations.md, "Publisher dashboard"). */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { errorResponses } from '../http/schemas.js';

/** The page (no `file`), or its script or style sheet; `v` is the bundle's version, for caching. */
export const DashboardQuerySchema = v.object({
  file: v.optional(v.pipe(v.picklist(['app.js', 'app.css'], 'file must be app.js or app.css'), v.description("The page's script or style sheet; absent: the page"))),
  v: v.optional(v.pipe(v.string(), v.description('Version of the bundle (a hash), set by the page so a new deploy is fetched afresh'))),
});

export const dashboardRoutes = {
  // One row (one function) for the page and its two files: every route costs about ten resources of the stack.
  dashboardGet: {
    method: 'GET',
    path: '/dashboard',
    handler: 'functions/dashboard-get.ts',
    auth: 'none',
    access: {},
    summary: 'The publisher dashboard: a page of this API (`/dashboard/` redirects here), and its script and style sheet (`?file=`)',
    description:
      'Sign in with the client name and API key (exchanged once for a token through GET /v1/token, kept in sessionStorage, the key never stored); ' +
      'shows the lists with their counts, imports with their progress and errors, and the statistics routes as charts with data tables. ' +
      'The page holds no data; every number comes from the token-authenticated routes. `?file=app.js` and `?file=app.css` are its script and style sheet (built from shared/dashboard/ with esbuild, uPlot included).',
    tags: ['meta'],
    request: { query: DashboardQuerySchema },
    responses: {
      200: {
        description: 'The page, or the file asked for',
        contentType: 'text/html; charset=utf-8',
        alternatives: [{ contentType: 'application/javascript; charset=utf-8' }, { contentType: 'text/css; charset=utf-8' }],
        headers: ['cache-control', 'content-security-policy', 'x-content-type-options', 'x-frame-options'],
      },
      400: errorResponses[400],
    },
  },
} as const satisfies Record<string, RouteDef>;
