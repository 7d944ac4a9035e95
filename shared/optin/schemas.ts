import * as v from 'valibot';
import { MAX_ID } from '../db/storable.js';
import { emailSchema } from '../mail/address.js';
import { dataFields } from '../subscribers/data.js';
import { dataFieldsDoc } from '../subscribers/schemas.js';

/**
 * Booleans of the opt-in form: JSON booleans, or their string form (HTML
 * forms send strings), case-insensitive. Anything else is undefined.
 */
export function looseBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
  }
  return undefined;
}

/** A short echo of a bad list id. */
const describe = (item: unknown) => (typeof item === 'string' ? JSON.stringify(item.slice(0, 40)) : typeof item === 'number' ? String(item) : item === null ? 'null' : typeof item);

/**
 * `email_lists` as JSON (array of ids) or from a form (repeated fields arrive
 * as an array, a single field as a string): always a list of integer ids.
 * Undefined when absent or empty; a string on failure (the problem).
 */
export function normaliseListIds(value: unknown): number[] | undefined | string {
  if (value === undefined || value === null || value === '') return undefined;
  const items = (Array.isArray(value) ? (value as unknown[]) : [value]).flatMap((item) => (typeof item === 'string' ? item.split(',') : [item]));
  const ids: number[] = [];
  for (const item of items) {
    const id = typeof item === 'number' ? item : typeof item === 'string' && /^\s*\d{1,10}\s*$/.test(item) ? Number(item) : NaN;
    if (!Number.isInteger(id) || id < 1 || id > MAX_ID) return `must be list ids (integers from 1 to ${MAX_ID}), got ${describe(item)}`;
    if (!ids.includes(id)) ids.push(id);
  }
  return ids.length ? ids : undefined;
}

/** The service's address rule (shared/mail/address.ts); the cause says what is wrong. */
export const EmailSchema = emailSchema();

/**
 * Body of POST /v1/subscribe/{tracking_key} (spec 4.1), JSON or a form.
 * Output is normalised: list ids as integers, booleans decoded, data_* collected.
 */
export const SubscribeBodySchema = v.pipe(
  v.looseObject({
    email: EmailSchema,
    form_key: v.pipe(v.string('must be a string'), v.trim(), v.nonEmpty('must not be empty'), v.maxLength(128, 'is not a form key')),
    email_lists: v.optional(v.unknown()),
    'email_lists[]': v.optional(v.unknown()),
    open_tracking_consent: v.optional(v.unknown()),
    update: v.optional(v.unknown()),
  }),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const body = dataset.value;
    // A bad email_lists is reported only for a global form (a list form ignores the field, spec 4.1).
    const lists = normaliseListIds(body.email_lists ?? body['email_lists[]']);
    const update = body.update === undefined || body.update === '' ? false : looseBoolean(body.update);
    if (update === undefined) {
      addIssue({ message: 'must be true or false', path: [{ type: 'object', origin: 'value', input: body, key: 'update', value: body.update }] });
      return NEVER;
    }
    const data = dataFields(body, { scalars: true });
    if (typeof data === 'string') {
      addIssue({ message: data });
      return NEVER;
    }
    return {
      email: body.email,
      formKey: body.form_key,
      emailLists: typeof lists === 'string' ? undefined : lists,
      emailListsProblem: typeof lists === 'string' ? `body.email_lists: ${lists}` : undefined,
      update,
      openTrackingConsent: looseBoolean(body.open_tracking_consent),
      data,
    };
  }),
);

/** The same body as the API description shows it (JSON; a form sends the same names, booleans as `true`/`false`). */
export const SubscribeBodyDoc = v.pipe(
  v.looseObject({
    email: v.pipe(v.string(), v.maxLength(254), v.email()),
    form_key: v.pipe(v.string(), v.maxLength(128)),
    email_lists: v.optional(
      v.pipe(v.array(v.pipe(v.number(), v.integer(), v.minValue(1))), v.description('Global forms: the lists chosen among the form\'s lists (required); list forms ignore it')),
    ),
    open_tracking_consent: v.optional(v.boolean()),
    update: v.optional(v.pipe(v.boolean(), v.description('true: update data_* and consent of a known subscriber, without email'))),
  }),
  v.metadata(dataFieldsDoc({ type: ['string', 'number', 'boolean', 'null'] })),
);

export type SubscribeBodyInput = v.InferInput<typeof SubscribeBodySchema>;
export type SubscribeBodyOutput = v.InferOutput<typeof SubscribeBodySchema>;

export const SubscribeParamsSchema = v.object({ tracking_key: v.pipe(v.string(), v.maxLength(128, 'is not a tracking key')) });
export const ConfirmParamsSchema = v.object({ token: v.string() });

export const SubscribeResultSchema = v.object({ success: v.string() });
