/** Shapes of the reader routes: links' path parameters (checked by the link itself, so plain strings here) and the export. */
import * as v from 'valibot';
import { EMAIL_DOC, emailSchema } from '../mail/address.js';

const segment = v.pipe(v.string(), v.maxLength(600, 'is not part of a reader link'));
export const UnsubscribeParamsSchema = v.object({ client_id: segment, list_id: segment, address: segment, token: segment });
export const PreferencesParamsSchema = v.object({ client_id: segment, address: segment, token: segment });
export type UnsubscribeParams = v.InferOutput<typeof UnsubscribeParamsSchema>;
export type PreferencesParams = v.InferOutput<typeof PreferencesParamsSchema>;

/** The one-click body (RFC 8058) as the API description shows it; the page's button sends the same. */
export const OneClickBodyDoc = v.object({ 'List-Unsubscribe': v.picklist(['One-Click']) });
/** The preference centre's form as the API description shows it. */
export const PreferencesBodyDoc = v.object({
  list: v.optional(v.pipe(v.array(v.pipe(v.number(), v.integer())), v.description('The ids of the ticked lists (a repeated form field)'))),
  action: v.optional(v.picklist(['save', 'unsubscribe_all'])),
});

export const ExportQuerySchema = v.object({ email: v.pipe(emailSchema(), v.metadata({ openapi: { ...EMAIL_DOC, description: 'The reader\'s address (docs/api.md, "Email addresses")' } })) });

const ConsentSchema = v.object({
  at: v.string(),
  subscribed: v.boolean(),
  cause: v.nullable(v.string()),
  source: v.string(),
  ip: v.nullable(v.string()),
  user_agent: v.nullable(v.string()),
  file_id: v.optional(v.string()),
  form_key: v.optional(v.string()),
  requested_at: v.optional(v.string()),
  confirmed_at: v.optional(v.string()),
});

export const ExportSchema = v.object({
  email: v.string(),
  memberships: v.array(
    v.object({
      list_id: v.number(),
      subscribed: v.boolean(),
      unsubscribed_cause: v.nullable(v.string()),
      guid: v.string(),
      previous_guids: v.array(v.string()),
      subscribed_at: v.nullable(v.string()),
      data: v.record(v.string(), v.unknown()),
      consent: v.array(ConsentSchema),
    }),
  ),
  pending_optins: v.array(v.object({ form_key: v.string(), list_ids: v.array(v.number()), data: v.record(v.string(), v.unknown()), created_at: v.string(), expires_at: v.string() })),
  readers: v.array(v.object({ guid: v.string(), history: v.nullable(v.record(v.string(), v.unknown())), preferences: v.nullable(v.record(v.string(), v.unknown())) })),
});

