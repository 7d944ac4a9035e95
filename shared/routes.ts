/**
 * The route table: every HTTP endpoint of the service, once. The CDK stack
 * builds one function per row and the local gateway routes to the same
 * handlers; the OpenAPI document is generated from it. Plain data only.
 */
import type { RouteDef } from './http/route.js';
import { authRoutes } from './routes/auth.js';
import { subscriberRoutes } from './routes/subscribers.js';
import { fileRoutes } from './routes/files.js';
import { docRoutes } from './routes/docs.js';
import { optinRoutes } from './routes/optin.js';
import { recoRoutes } from './routes/recos.js';
import { articleRoutes } from './routes/articles.js';
import { webhookRoutes } from './routes/webhooks.js';
import { readerRoutes } from './routes/readers.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { statsRoutes } from './routes/stats.js';
import { recoStatsRoutes } from './routes/stats-recos.js';
import { blockRoutes } from './routes/blocks.js';
import { newsletterPicksRoutes } from './routes/newsletter-picks.js';

/**
 * Every row, by id. The rows live in groups (shared/routes/*.ts); a function
 * imports only its own group, so it bundles only that group's schemas.
 */
export const routes = {
  ...authRoutes,
  ...subscriberRoutes,
  ...fileRoutes,
  ...docRoutes,
  ...optinRoutes,
  ...recoRoutes,
  ...articleRoutes,
  ...webhookRoutes,
  ...readerRoutes,
  ...dashboardRoutes,
  ...statsRoutes,
  ...recoStatsRoutes,
  ...blockRoutes,
  ...newsletterPicksRoutes,
} as const satisfies Record<string, RouteDef>;

export type RouteId = keyof typeof routes;

/** What the service sends to its clients' webhooks (the OpenAPI document's `webhooks`). */
export { outboundWebhooks } from './routes/webhooks.js';

/** Rows as a list, for the stack, the gateway and the OpenAPI document. */
export const routeList = (Object.entries(routes) as Array<[RouteId, RouteDef]>).map(([id, route]) => ({ id, ...route }));

/**
 * Requests that match no row go to this function (API Gateway's `$default`
 * route; the local gateway does the same): 404 for an unknown path, 405 for a
 * known path with another method.
 */
export const fallbackHandler = 'functions/fallback.ts';
