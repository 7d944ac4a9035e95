/**
 * Throttling and concurrency of the deployed service, in one place (the
 * reasoning is in docs/operations.md, "Throttling and concurrency").
 * Keys are the ids of shared/routes.ts and shared/jobs.ts rows (typed: a
 * misspelt id fails the type check).
 */
import type { JobId } from '../shared/jobs.js';
import type { RouteId } from '../shared/routes.js';

/** Requests per second and burst of an API Gateway stage or route. */
export interface Throttle {
  rateLimit: number;
  burstLimit: number;
}

/** API Gateway stage default: every route not listed below (token-authenticated API calls). Requests per second, burst. */
export const stageThrottle: Throttle = { rateLimit: 200, burstLimit: 400 };

/**
 * Tighter limits for the public routes: anyone can call them. `/v1/token`
 * runs scrypt on every call; subscribe sends email; track, recommendations
 * and redirect read and write on-demand DynamoDB per page view.
 */
export const routeThrottles = {
  tokenGet: { rateLimit: 10, burstLimit: 20 },
  subscribePost: { rateLimit: 20, burstLimit: 40 },
  optinConfirm: { rateLimit: 20, burstLimit: 40 },
  // Two reads and one SQS message per view (the rest is batched by the trackingViews job): a viral article's 1,000 views/s.
  trackPost: { rateLimit: 1000, burstLimit: 2000 },
  recosGet: { rateLimit: 100, burstLimit: 200 },
  redirectGet: { rateLimit: 50, burstLimit: 100 },
  libraryGet: { rateLimit: 50, burstLimit: 100 },
  openapiGet: { rateLimit: 5, burstLimit: 10 },
  // The dashboard's page and its two files (three requests a visit): static, public; a publisher's staff at a browser.
  dashboardGet: { rateLimit: 20, burstLimit: 40 },
  // Reader links: public; a big newsletter's one-click unsubscribes arrive in a burst after a send.
  readerUnsubscribeGet: { rateLimit: 50, burstLimit: 100 },
  readerUnsubscribePost: { rateLimit: 50, burstLimit: 100 },
  readerPreferencesGet: { rateLimit: 20, burstLimit: 40 },
  readerPreferencesPost: { rateLimit: 20, burstLimit: 40 },
} satisfies Partial<Record<RouteId, Throttle>>;

/**
 * Reserved concurrency. For the workers it is a guarantee (public traffic
 * cannot take their slots) and a cap (a flood of uploads or SES events
 * cannot take everyone else's); for public routes it is a cap. The sum
 * (here 170) is taken from the account's regional pool (default 1000), and
 * AWS keeps at least 100 unreserved, so the account needs a limit of at least
 * 270; a new account with a lower limit must ask for the default first.
 */
export const reservedConcurrency = {
  importsWorker: 10,
  sesEvents: 5,
  trackingViews: 10,
  // Their event source mappings' maximum concurrency.
  webhooksFanout: 5,
  webhooksDeliver: 20,
  tokenGet: 10,
  subscribePost: 20,
  optinConfirm: 10,
  trackPost: 40,
  recosGet: 40,
  redirectGet: 25,
} satisfies Partial<Record<RouteId | JobId, number>>;

/** The throttle of a route, when it has its own (else the stage's applies). */
export function routeThrottle(id: RouteId): Throttle | undefined {
  const throttles: Partial<Record<RouteId, Throttle>> = routeThrottles;
  return throttles[id];
}

/** The reserved concurrency of a route's or a job's function, when it has one. */
export function reservedConcurrencyOf(id: RouteId | JobId): number | undefined {
  const reserved: Partial<Record<RouteId | JobId, number>> = reservedConcurrency;
  return reserved[id];
}

/** Days the API access log is kept. */
export const accessLogRetentionDays = 90;
