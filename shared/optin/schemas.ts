import * as v from 'valibot';
import { dataFieldsDoc, MAX_DATA_BYTES } from '../subscribers/schemas.js';

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

/**
 * `email_lists` as JSON (array of ids) or from a form (repeated fields arrive
 * as an array, a single field as a string): always a list of integer ids.
 * Undefined when absent or empty; a string on failure (the problem).
 */
export function normaliseListIds(value: unknown): number[] | undefined | string {
  if (value === undefined || value === null || value === '') return undefined;
  const items = (Array.isArray(value) ? value : [value]).flatMap((item) => (typeof item === 'string' ? item.split(',') : [item]));
  const ids: number[] = [];
  for (const item of items) {
    const id = typeof item === 'number' ? item : typeof item === 'string' && /^\s*\d{1,9}\s*$/.test(item) ? Number(item) : NaN;
    if (!Number.isInteger(id) || id < 1) return `must be list ids (positive integers), got ${JSON.stringify(item)}`;
    if (!ids.includes(id)) ids.push(id);
  }
  return ids.length ? ids : undefined;
}

const DATA_NAME = /^data_[A-Za-z0-9_.-]{1,64}$/;

/**
 * The `data_*` fields of a body, by the same rules as the list API (names
 * `data_` + 1 to 64 of `A-Za-z0-9_.-`, scalar values, at most
 * MAX_DATA_BYTES of JSON in all); a string on failure (the problem).
 */
export function dataFields(body: Record<string, unknown>): Record<string, unknown> | string {
  const data: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!name.startsWith('data_')) continue;
    if (!DATA_NAME.test(name)) return `${name.slice(0, 80)} is not a valid data field name`;
    if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) return `${name}: must be a string, number, boolean or null`;
    data[name] = value;
  }
  if (JSON.stringify(data).length > MAX_DATA_BYTES) return `data_* fields are larger than ${MAX_DATA_BYTES} bytes`;
  return data;
}

export const EmailSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.nonEmpty('must not be empty'),
  v.maxLength(254, 'must be a valid email'),
  v.email('must be a valid email'),
  v.toLowerCase(),
);

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
    const data = dataFields(body);
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
