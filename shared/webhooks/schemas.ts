import * as v from 'valibot';
import { changeTypes } from './changes.js';

const WEBHOOK_ID = /^wh_[0-9a-f]{24}$/;

/** Body of POST /v1/webhooks. */
export const WebhookBodySchema = v.object({
  url: v.pipe(v.string('url must be a string'), v.trim(), v.minLength(1, 'url is required'), v.maxLength(2048, 'url is longer than 2048 characters'), v.metadata({ openapi: { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]://', minLength: 1, maxLength: 2048 } })),
  events: v.pipe(
    v.array(v.picklist(changeTypes, `events: each must be one of ${changeTypes.join(', ')}`), 'events must be an array of event types'),
    v.minLength(1, 'events must name at least one event type'),
    v.check((types) => new Set(types).size === types.length, 'events must not repeat a type'),
  ),
});
export type WebhookBodyInput = v.InferOutput<typeof WebhookBodySchema>;

export const WebhookIdParamsSchema = v.object({ webhook_id: v.pipe(v.string(), v.regex(WEBHOOK_ID, 'webhook_id must be wh_ followed by 24 hex digits')) });

/** A registered webhook, as listed (without its secret). */
export const WebhookSchema = v.object({
  id: v.pipe(v.string(), v.regex(WEBHOOK_ID)),
  url: v.string(),
  events: v.array(v.picklist(changeTypes)),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
});
export type WebhookOutput = v.InferOutput<typeof WebhookSchema>;

/** A new webhook: its signing secret is answered once, here. */
export const WebhookCreatedSchema = v.object({
  ...WebhookSchema.entries,
  secret: v.pipe(v.string(), v.regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/), v.description('Standard Webhooks signing secret (whsec_ + base64); shown only in this answer')),
});

/** The JSON body of every delivery and the `detail` of every EventBridge event (docs/api.md "Change events"). */
export const ChangeEventSchema = v.object({
  id: v.pipe(v.string(), v.description('Stable across retries: the webhook-id header')),
  type: v.pipe(
    v.picklist(changeTypes),
    v.description(
      'subscriber.subscribed / subscriber.unsubscribed: a state change of the address on the list; subscriber.deleted: the subscription was erased by POST /v1/users/delete (one event per list the address was on): delete the person (by email and guid), do not keep them as unsubscribed; subscriber.bounced / subscriber.complained: SES feedback; import.finished: an imported file ended',
    ),
  ),
  time: v.pipe(v.string(), v.isoTimestamp(), v.description('When the change happened (for subscriber.deleted: the deletion)')),
  client_id: v.string(),
  list_id: v.nullable(v.number()),
  email: v.pipe(v.nullable(v.string()), v.description('The address (null for import.finished); for subscriber.deleted the erased address: with guid, all a deletion carries of the person')),
  guid: v.nullable(v.string()),
  cause: v.nullable(v.string()),
  source: v.picklist(['subscribers', 'ses', 'imports']),
  data: v.record(v.string(), v.union([v.string(), v.number()])),
});
