/** Rows of the route table (shared/routes.ts): the double opt-in form endpoint and its confirmation link. */
import type { HeaderName } from '../http/header-docs.js';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { DEFAULT_SUBSCRIBE_LIMITS } from '../ratelimit/policy.js';
import { ConfirmParamsSchema, SubscribeBodyDoc, SubscribeBodySchema, SubscribeParamsSchema, SubscribeResultSchema } from '../optin/schemas.js';

/** The headers of the confirmation link's pages. */
const PRIVATE_PAGE: HeaderName[] = ['cache-control', 'referrer-policy', 'x-robots-tag'];

export const optinRoutes = {
  subscribePost: {
    method: 'POST',
    path: '/v1/subscribe/{tracking_key}',
    handler: 'functions/subscribe-post.ts',
    auth: 'key',
    access: { table: 'RW', events: 'W', mail: true },
    summary: 'Double opt-in subscription from a form (JSON or an HTML form)',
    description:
      'No token: the tracking key (path) and form_key (body) identify the client. A new address gets a confirmation email; an address already subscribed gets the same answer and nothing changes; update=true updates a known subscriber without email. ' +
      `Rate limits: ${DEFAULT_SUBSCRIBE_LIMITS.perIpPerMinute} per IP and ${DEFAULT_SUBSCRIBE_LIMITS.perKeyPerMinute} overall per minute by default (per client), 429 with Retry-After beyond.`,
    tags: ['opt-in'],
    request: { params: SubscribeParamsSchema, body: SubscribeBodySchema, bodyDoc: SubscribeBodyDoc, bodyTypes: ['json', 'form'] },
    responses: {
      200: { description: 'Confirmation email on its way (also for an address already subscribed), or subscriber updated', schema: SubscribeResultSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      415: { description: 'Body neither JSON nor a form', schema: ErrorSchema },
      429: { description: 'Rate limit exceeded; Retry-After gives the seconds to wait', schema: ErrorSchema },
    },
  },
  optinConfirm: {
    method: 'GET',
    path: '/v1/optin/confirm/{token}',
    handler: 'functions/optin-confirm.ts',
    auth: 'key',
    access: { table: 'RW', events: 'W' },
    summary: 'The confirmation link of a double opt-in email',
    description:
      "Single use: subscribes the address to the form's lists, then shows a small page or redirects to the form's confirmation URL. A second click changes nothing. An unknown or expired link: 404 page. The confirmation page, like the confirmation and reminder emails, carries the publisher (the client's display name, logo, brand colour, postal address and privacy policy: docs/operations.md, \"Branding\").",
    tags: ['opt-in'],
    request: { params: ConfirmParamsSchema },
    responses: {
      200: { description: 'Confirmation page', contentType: 'text/html; charset=utf-8', headers: [...PRIVATE_PAGE, 'content-security-policy'] },
      302: { description: "Redirect to the form's confirmation URL", headers: ['location', ...PRIVATE_PAGE] },
      400: { description: 'Not a link token at all', schema: ErrorSchema },
      404: { description: 'Link not valid or expired (HTML page)', contentType: 'text/html; charset=utf-8', headers: [...PRIVATE_PAGE, 'content-security-policy'] },
    },
  },
} as const satisfies Record<string, RouteDef>;
