/** Rows of the route table (shared/routes.ts): webhook endpoints of the caller (shared/webhooks/), a group of its own. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { ChangeEventSchema, WebhookBodySchema, WebhookCreatedSchema, WebhookIdParamsSchema, WebhookSchema } from '../webhooks/schemas.js';

export const webhookRoutes = {
  webhooksCreate: {
    method: 'POST',
    path: '/v1/webhooks',
    handler: 'functions/webhooks-create.ts',
    auth: 'token',
    access: { table: 'RW' },
    summary: 'Register a webhook: signed POSTs of subscriber changes',
    description:
      'Each change of the types in `events` is POSTed to `url` as JSON (docs/api.md "Change events"), signed per Standard Webhooks with the `secret` answered here, once (headers `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`). The URL must be https and resolve to public addresses only (private, loopback, link-local, CGNAT, multicast and metadata addresses are refused here and again at every connect). A 2xx answer within WEBHOOK_TIMEOUT_MS acknowledges; anything else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h with the same `webhook-id`, then dead-lettered. At most WEBHOOK_MAX_PER_CLIENT webhooks per client.',
    tags: ['webhooks'],
    request: { body: WebhookBodySchema },
    responses: {
      201: { description: 'The webhook with its signing secret (shown only here). Location: /v1/webhooks/{webhook_id}', schema: WebhookCreatedSchema, headers: ['location'] },
      400: { description: 'Invalid body, or a URL that is refused (`cause` starts with `url:`)', schema: ErrorSchema },
      401: errorResponses[401],
      409: { description: 'The client already has WEBHOOK_MAX_PER_CLIENT webhooks', schema: ErrorSchema },
      415: errorResponses[415],
    },
  },
  webhooksList: {
    method: 'GET',
    path: '/v1/webhooks',
    handler: 'functions/webhooks-list.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "The caller's webhooks (without their secrets), oldest first",
    tags: ['webhooks'],
    responses: { 200: { description: 'The webhooks', schema: v.array(WebhookSchema) }, 401: errorResponses[401] },
  },
  webhooksDelete: {
    method: 'DELETE',
    path: '/v1/webhooks/{webhook_id}',
    handler: 'functions/webhooks-delete.ts',
    auth: 'token',
    access: { table: 'RW' },
    summary: 'Delete one of the caller’s webhooks; deliveries still queued for it are dropped',
    tags: ['webhooks'],
    request: { params: WebhookIdParamsSchema },
    responses: {
      204: { description: 'Deleted' },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'The caller has no webhook with this id', schema: ErrorSchema },
    },
  },
} as const satisfies Record<string, RouteDef>;

/** What the service POSTs to registered webhooks: the OpenAPI document's `webhooks` (docs/api.md "Change events"). */
export const outboundWebhooks = {
  subscriberChange: {
    summary: 'A subscriber change (or an import’s end), POSTed to a registered webhook',
    description:
      'One event per request, signed per Standard Webhooks: verify `webhook-signature` (`v1,<base64 HMAC-SHA256 of "webhook-id.webhook-timestamp.body">` with the webhook’s `whsec_` secret) over the raw body, and de-duplicate by `webhook-id` (the same on every retry). Answer 2xx within WEBHOOK_TIMEOUT_MS; anything else is retried with backoff for about a day. The same JSON is the `detail` of the event on the change bus (detail-type = `type`).',
    tags: ['webhooks'],
    schema: ChangeEventSchema,
    headers: {
      'webhook-id': 'The event’s id (evt_…), stable across retries',
      'webhook-timestamp': 'Unix seconds of this attempt (signed: reject old ones)',
      'webhook-signature': 'v1,<base64 HMAC-SHA256 of "webhook-id.webhook-timestamp.body">',
    },
  },
};
