import * as v from 'valibot';
import { isWellFormed } from '../db/storable.js';
import { EMAIL_DOC, emailSchema } from '../mail/address.js';

/** A count in a response: a non-negative integer. */
const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** Most lines one request may carry (spec §8). */
export const MAX_LINES = 20_000;

const booleanLike = (message: string) =>
  v.union(
    [v.boolean(), v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['true', 'false']), v.transform((s) => s === 'true'))],
    message,
  );

/** email: the service's address rule (shared/mail/address.ts), trimmed and lower-cased. */
export const EmailSchema = emailSchema('email is missing or invalid');

/** open_tracking_consent: true/false in any case; any other value leaves consent unchanged (spec 2.4). */
const ConsentSchema = v.optional(
  v.pipe(v.fallback(v.union([booleanLike(''), v.undefined()]), undefined), v.metadata({ openapi: { type: 'boolean', description: 'true/false (any case, also as a string); any other value leaves the consent unchanged' } })),
);

const fields = {
  email: EmailSchema,
  guid: v.optional(
    v.pipe(
      v.union([v.string(), v.pipe(v.number(), v.transform(String))], 'guid must be a string'),
      v.trim(),
      v.minLength(1, 'guid must not be empty'),
      v.maxLength(255, 'guid is longer than 255 characters'),
      v.check(isWellFormed, 'guid must not contain unpaired surrogates (invalid Unicode)'),
    ),
  ),
  unsubscribed_cause: v.optional(
    v.pipe(
      v.string('unsubscribed_cause must be READER or PUBLISHER'),
      v.metadata({ openapi: { type: 'string', enum: ['READER', 'PUBLISHER'], description: 'Why an unsubscribed line is unsubscribed (case-insensitive); READER by default' } }),
      v.trim(),
      v.toUpperCase(),
      v.picklist(['READER', 'PUBLISHER'], 'unsubscribed_cause must be READER or PUBLISHER'),
    ),
  ),
  open_tracking_consent: ConsentSchema,
};

/** How the API description shows a body's `data_*` fields (in a `v.metadata`): names `data_<1 to 64 of A-Za-z0-9_.->`. */
export const dataFieldsDoc = (value: Record<string, unknown> = {}) => ({
  patternProperties: { '^data_[A-Za-z0-9_.-]{1,64}$': { description: 'A custom data field, kept with the subscriber', ...value } },
});

/** One subscriber as written (spec 2.4); `data_*` fields pass through. */
export const SubscriberInputSchema = v.pipe(
  v.looseObject({ ...fields, subscribed: v.optional(booleanLike('subscribed must be true or false')) }, 'a subscriber must be a JSON object'),
  v.metadata(dataFieldsDoc()),
);

/** The list API's body as the API description shows it: one subscriber, or 1 to 20,000. */
export const SubscribersBodyDoc = v.union([SubscriberInputSchema, v.pipe(v.array(SubscriberInputSchema), v.minLength(1), v.maxLength(MAX_LINES))]);

/** The same, for CSV lines: an invalid `subscribed` counts as absent (spec 2.8). */
export const LenientSubscriberInputSchema = v.looseObject(
  { ...fields, subscribed: v.optional(v.fallback(v.union([booleanLike(''), v.undefined()]), undefined)) },
  'a subscriber must be a JSON object',
);

/** Body of POST …/subscribers: one subscriber or an array of at most 20,000 (spec 4.8). Lines are checked one by one. */
export const SubscribersBodySchema = v.union(
  [
    v.pipe(
      v.array(v.unknown()),
      v.minLength(1, 'the array is empty'),
      v.maxLength(MAX_LINES, `at most ${MAX_LINES} subscribers per request`),
    ),
    v.custom<Record<string, unknown>>(
      (body) => typeof body === 'object' && body !== null && !Array.isArray(body),
      'must be a subscriber object or an array of subscriber objects',
    ),
  ],
  'must be a subscriber object or an array of subscriber objects',
);

export const ReportSchema = v.object({
  report: v.object({
    errors: v.array(v.object({ line: Count, email: v.nullable(v.string()), cause: v.string() })),
    unique_emails_count: Count,
    duplicate_emails_count: Count,
    duplicate_guid_count: Count,
    nb_created: Count,
    nb_subscribed: Count,
    nb_unsubscribed: Count,
    nb_data_changed: Count,
  }),
});

export const CountSchema = v.object({
  subscribed: Count,
  unsubscribed: Count,
  cause: v.object({ HARD_BOUNCE: Count, PUBLISHER: Count, READER: Count }),
});

/** Listing page size: default and maximum (spec 4.7 leaves them open). */
export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;

const intParam = (name: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,9}$/, `${name} must be an integer from ${min} to ${max}`),
    v.transform(Number),
    v.number(),
    v.integer(),
    v.minValue(min, `${name} must be an integer from ${min} to ${max}`),
    v.maxValue(max, `${name} must be an integer from ${min} to ${max}`),
  );

export const ListingQuerySchema = v.pipe(
  v.object({
    status: v.optional(v.picklist(['subscribed', 'unsubscribed'], 'status must be subscribed or unsubscribed')),
    offset: v.optional(v.pipe(intParam('offset', 0, 100_000_000), v.metadata({ default: 0 }))),
    count: v.optional(v.pipe(intParam('count', 1, MAX_PAGE), v.metadata({ default: DEFAULT_PAGE }))),
    search: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(254, 'search is longer than 254 characters'))),
    cursor: v.optional(v.pipe(v.string(), v.maxLength(2048, 'cursor is invalid'))),
  }),
  v.check((q) => !(q.cursor && (q.offset ?? 0) > 0), 'offset and cursor cannot be combined'),
);

export const SubscriberOutputSchema = v.object({
  email: v.string(),
  guid: v.string(),
  subscribed: v.boolean(),
  subscribed_at: v.nullable(v.string()),
});

/** The users/delete body as the API description shows it. */
export const UsersDeleteBodyDoc = v.pipe(v.array(v.object({ email: v.pipe(v.string(), v.metadata({ openapi: EMAIL_DOC })) })), v.minLength(1), v.maxLength(MAX_LINES));

/** Body of POST /v1/users/delete: `[{email}]` (spec 4.2); entries are checked one by one so every bad one is named. */
export const UsersDeleteBodySchema = v.pipe(
  v.array(v.unknown(), 'must be an array of {email} objects'),
  v.minLength(1, 'the array is empty'),
  v.maxLength(MAX_LINES, `at most ${MAX_LINES} users per request`),
);

/** The deprecated POST's single-object profile fields (spec 4.10), kept as data_<name>. */
export const LEGACY_PROFILE_FIELDS = ['pseudo', 'first_name', 'last_name', 'location', 'segment'] as const;

/** The deprecated POST's single object (for the OpenAPI document). */
export const LegacySubscriberSchema = v.looseObject({
  ...fields,
  subscribed: v.optional(booleanLike('subscribed must be true or false')),
  ...Object.fromEntries(LEGACY_PROFILE_FIELDS.map((name) => [name, v.optional(v.nullable(v.string()))])),
});
