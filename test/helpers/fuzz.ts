/**
 * The property-based fuzz of the route table (fast-check): valid requests
 * generated from each route's valibot schemas (through their JSON Schema, as
 * the OpenAPI document shows them), then mutated. The invariants are checked
 * by test/integration/fuzz.test.ts.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { toJsonSchema } from '@valibot/to-json-schema';
import fc from 'fast-check';
import type * as v from 'valibot';
import { config } from '../../shared/config.js';
import { queryAll, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import type { RouteDef } from '../../shared/http/route.js';
import { s3 } from '../../shared/s3.js';

export type Route = RouteDef & { id: string };

/** What the fuzz client owns: the values a valid request needs. */
export interface FuzzContext {
  username: string;
  apiKey: string;
  token: string;
  trackingKey: string;
  formKey: string;
  blockKey: string;
  listId: number;
  /** A loopback CSV URL the import may fetch. */
  csvUrl: string;
  site: string;
  /** Keys minted for the routes that check one (opt-in token, signed links, webhook and job ids), by route id: its valid path parameters and query. */
  minted: Partial<Record<string, MintedKey[]>>;
}

/** Valid path parameters and query of one route (each replaces the generated ones when given). */
export interface MintedKey {
  params?: Record<string, string>;
  query?: Record<string, string>;
}

/** The few addresses and reader ids requests use, so the state snapshot can cover them. */
export const EMAILS = ['fz1@example.com', "o'fz@example.com", 'fz+tag@xn--mnchen-3ya.de', 'FZ2@Example.com'];
export const USER_IDS = ['reader-1', 'reader-2'];

export interface FuzzRequest {
  method: string;
  path: string;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /** The body as sent (already encoded), or undefined. */
  raw?: string;
  /** What was mutated, for the failure report. */
  mutation: string;
}

type Json = Record<string, unknown>;

const jsonSchemaOf = (schema: unknown): Json =>
  toJsonSchema(schema as v.GenericSchema, { errorMode: 'ignore', typeMode: 'input' }) as Json;

/** Odd strings: lone surrogates, controls, lookalikes, bidi, long, escapes. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\ud800',
    'a\udfffb',
    '\u0000',
    '\u212Aelvin',
    '\u202Eabc',
    '\u200B',
    '😀',
    'é',
    'x'.repeat(300),
    'x'.repeat(70_000),
    '%E0%A4%A',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    "o'brien@example.com",
    'a@b',
    ' a@b.co ',
    'user@münchen.de',
    '1e300',
    'NaN',
    '-1',
    'true',
    '__proto__',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 3 }),
);

const nestedValue = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { k: value };
  return value;
};

/** Odd values for any field: wrong types, boundary and out-of-range numbers, odd strings, nesting, empty keys. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -0,
    -1,
    1.5,
    2 ** 53,
    2 ** 53 + 2,
    2 ** 64,
    -(2 ** 64),
    1e300,
    -1e300,
    1e-320,
    5e-324,
    1e-130,
    1e126,
    Number.MAX_SAFE_INTEGER,
    1e19,
    [],
    {},
    { '': 1 },
    [[]],
    [{ a: { '': null } }],
    nestedValue(20),
    nestedValue(40),
  ),
  oddString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Values at and beyond what storage holds: number range and precision, nesting, empty keys, invalid Unicode. */
export const storageEdge: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  2 ** 53,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  2 ** 64,
  1e300,
  -1e300,
  1e126,
  1e-130,
  1e-131,
  1e-320,
  5e-324,
  1e19,
  { '': 1 },
  [{ a: { '': null } }],
  nestedValue(15),
  nestedValue(16),
  nestedValue(31),
  nestedValue(200),
  '\ud800',
  { '\udc00': 1 },
  'x'.repeat(11_000),
  [1e300],
);

/** The UTC day `offset` days from today, YYYY-MM-DD. */
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** Field values that make a request valid for this client, by field name. */
function known(ctx: FuzzContext, route: Route, name: string): fc.Arbitrary<unknown> | undefined {
  switch (name) {
    case 'email':
      return fc.constantFrom(...EMAILS);
    case 'form_key':
      return fc.constant(ctx.formKey);
    case 'email_lists':
      return fc.constant([ctx.listId]);
    case 'email_lists[]':
      return fc.constant(undefined);
    case 'url':
      return route.id === 'filesCreate' ? fc.constant(ctx.csvUrl) : fc.constantFrom(`${ctx.site}/a`, `${ctx.site}/b?x=1`);
    case 'image':
      return fc.constantFrom(`${ctx.site}/i.png`, '');
    case 'page_url':
      return fc.constant(`${ctx.site}/a`);
    case 'excluded[]':
      return fc.constant(`${ctx.site}/b`);
    case 'email_list_id':
    case 'list_id':
      return route.request?.params && name === 'list_id' ? fc.constant(String(ctx.listId)) : fc.constant(ctx.listId);
    case 'file_id':
      return fc.constantFrom('1', '2');
    case 'tracking_key':
      return fc.constant(ctx.trackingKey);
    case 'block_key':
      return fc.constant(ctx.blockKey);
    case 'user_id':
      return fc.constantFrom(...USER_IDS);
    case 'username':
      return fc.constant(ctx.username);
    case 'password':
      return fc.constant(ctx.apiKey);
    case 'date':
      return fc.constant(new Date().toISOString().slice(0, 10));
    case 'cursor':
      return fc.constant(undefined);
    case 'token':
      return fc.stringMatching(/^[0-9a-f]{10,64}$/);
    case 'published_time':
      return fc.oneof(fc.integer({ min: 0, max: 2_000_000_000 }), fc.constant('2026-01-01T00:00:00Z'));
    case 'unsubscribed_cause':
      return fc.constantFrom('READER', 'PUBLISHER', 'reader');
    case 'subscribed':
      return fc.constantFrom(true, false, 'true', 'FALSE');
    case 'open_tracking_consent':
      return fc.constantFrom(true, false, 'True', undefined);
    case 'update':
      return fc.constantFrom(false, 'false', undefined);
    case 'guid':
      return route.id === 'redirectGet' ? fc.stringMatching(/^[0-9a-f]{20}$/) : fc.stringMatching(/^[a-z0-9-]{1,20}$/);
    case 'rows':
      return fc.integer({ min: 1, max: route.id === 'newsletterPicksGet' ? 20 : 100 }).map(String);
    case 'from':
      return fc.integer({ min: -30, max: 0 }).map(day);
    case 'to':
      return fc.integer({ min: 0, max: 30 }).map(day);
    case 'count':
      return fc.integer({ min: 1, max: 1000 }).map(String);
    case 'start':
    case 'offset':
      return fc.integer({ min: 0, max: 50 }).map(String);
    case 'title':
    case 'description':
    case 'category':
      return fc.string({ maxLength: 40 });
    case 'themes':
      return fc.array(fc.constantFrom('food', 'sport', 'Tech'), { maxLength: 3 });
    default:
      return undefined;
  }
}

/** A value valid for the JSON Schema (field names the client context knows take its values). */
function arbitraryOf(ctx: FuzzContext, route: Route, schema: Json, name?: string): fc.Arbitrary<unknown> {
  const byName = name === undefined ? undefined : known(ctx, route, name);
  if (byName) return byName;
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Json[]).map((s) => arbitraryOf(ctx, route, { ...s, ...(schema.maxLength ? { maxLength: schema.maxLength } : {}) }, name)));
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Json>;
      const required = (schema.required ?? []) as string[];
      const model = Object.fromEntries(Object.entries(props).map(([key, s]) => [key, arbitraryOf(ctx, route, s, key)]));
      return fc.record(model, { requiredKeys: required }).map((o) => JSON.parse(JSON.stringify(o)) as unknown);
    }
    case 'array':
      return fc.array(arbitraryOf(ctx, route, (schema.items ?? {}) as Json, name), {
        minLength: Math.max(1, (schema.minItems as number | undefined) ?? 0),
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 4, 4),
      });
    case 'string': {
      const min = (schema.minLength as number | undefined) ?? 0;
      const max = Math.min((schema.maxLength as number | undefined) ?? 30, 30);
      if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= ((schema.maxLength as number) ?? 1e9));
      return fc.string({ minLength: min, maxLength: Math.max(min, max) });
    }
    case 'integer':
      return fc.integer({ min: Math.max((schema.minimum as number | undefined) ?? -1000, -(2 ** 31)), max: Math.min((schema.maximum as number | undefined) ?? 1000, 2 ** 31 - 1) });
    case 'number':
      return fc.integer({ min: -1000, max: 1000 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** The valid body of a route for this client. */
function validBody(ctx: FuzzContext, route: Route): fc.Arbitrary<unknown> {
  if (route.id === 'usersDelete') return fc.array(fc.record({ email: fc.constantFrom(...EMAILS) }), { minLength: 1, maxLength: 3 });
  const body = route.request?.bodyDoc ?? route.request?.body;
  const base = arbitraryOf(ctx, route, jsonSchemaOf(body));
  // Settings drawn from the schema alone are rarely storable together: some cases send ones that are.
  if (route.id === 'blocksPut') return fc.oneof(fc.constantFrom<unknown>({}, { rows: 4 }, { rows: null }), base);
  // Loose bodies (subscribers, opt-in) also carry data_* fields.
  if (['subscribersPost', 'legacySubscribersPost', 'subscribePost'].includes(route.id)) {
    const data = fc.dictionary(fc.stringMatching(/^data_[a-z]{1,6}$/), fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean()), { maxKeys: 2 });
    return fc.tuple(base, data).map(([b, d]) => (b && typeof b === 'object' && !Array.isArray(b) ? { ...(b as Json), ...d } : b));
  }
  return base;
}

/** Percent-encodes a path segment; a string that cannot be encoded (lone surrogate) goes as a malformed escape. */
const encodeSegment = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
};

function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{([a-z_]+)\+?\}/gi, (_m, name: string) => (params[name] === undefined ? '' : params[name].startsWith('%') ? params[name] : encodeSegment(params[name])));
}

function encodeBody(body: unknown, contentType: string): string {
  if (/x-www-form-urlencoded/i.test(contentType)) {
    const form = new URLSearchParams();
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      for (const [k, val] of Object.entries(body as Json)) {
        for (const item of Array.isArray(val) ? val : [val]) form.append(k, typeof item === 'string' ? item : JSON.stringify(item) ?? '');
      }
    }
    return form.toString();
  }
  return JSON.stringify(body) ?? 'null';
}

/** One mutation of a valid request, or none. */
type Mutation =
  | { kind: 'none' }
  | { kind: 'field'; pick: number; value: unknown }
  | { kind: 'drop'; pick: number }
  | { kind: 'extra'; name: string; value: unknown }
  | { kind: 'storage'; field: boolean; pick: number; name: string; value: unknown }
  | { kind: 'body'; value: unknown }
  | { kind: 'raw'; template: 'duplicate' | 'deep' | 'invalid' | 'bom' | 'empty' | 'deep-data'; value: unknown }
  | { kind: 'content-type'; value: string | undefined }
  | { kind: 'param'; pick: number; value: string }
  | { kind: 'query'; name: string; value: string }
  | { kind: 'token'; value: string | undefined }
  | { kind: 'method'; value: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.constant<Mutation>({ kind: 'none' }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('field' as const), pick: fc.nat(), value: oddValue }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('extra' as const), name: fc.oneof(fc.stringMatching(/^data_[a-z]{1,6}$/), oddString, fc.constant('data_')), value: oddValue }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('storage' as const), field: fc.boolean(), pick: fc.nat(), name: fc.stringMatching(/^data_[a-z]{1,6}$/), value: storageEdge }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('body' as const), value: oddValue }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('raw' as const), template: fc.constantFrom('duplicate', 'deep', 'invalid', 'bom', 'empty', 'deep-data') as fc.Arbitrary<'deep'>, value: oddValue }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('content-type' as const),
      value: fc.constantFrom(undefined, 'text/plain', 'Application/JSON', 'application/json ; charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'application/vnd.api+json', 'json', '*/*'),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('param' as const), pick: fc.nat(), value: fc.oneof(oddString, fc.constantFrom('0', '-1', '99999999999', '1e300', '%E0%A4%A', '%00')) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('query' as const), name: fc.oneof(fc.constantFrom('count', 'offset', 'status', 'search', 'cursor', 'rows', 'start', 'callback', 'format', 'password', 'username', 'https', 'page_url'), oddString), value: oddString }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('token' as const), value: fc.constantFrom(undefined, 'garbage', '', 'x'.repeat(5000)) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('method' as const), value: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH') }), weight: 1 },
);

/** Cases of one route: a valid request from its schemas, then one mutation. */
export function requestsOf(ctx: FuzzContext, route: Route): fc.Arbitrary<FuzzRequest> {
  const generated = fc.record({
    params: route.request?.params ? arbitraryOf(ctx, route, jsonSchemaOf(route.request.params)) : fc.constant({}),
    query: route.request?.query ? arbitraryOf(ctx, route, jsonSchemaOf(route.request.query)) : fc.constant<unknown>({}),
  });
  // A route that checks a key gets the minted one in about half of its cases, so its answers past 404 are checked too.
  const minted = ctx.minted[route.id] ?? [];
  const located = minted.length
    ? fc.oneof(fc.tuple(fc.constantFrom(...minted), generated).map(([k, g]) => ({ params: k.params ?? g.params, query: k.query ?? g.query })), generated)
    : generated;
  // The reader pages' forms are described only (bodyDoc): they carry a body too.
  const hasBody = route.request?.body !== undefined || route.request?.bodyDoc !== undefined;
  const body = hasBody ? validBody(ctx, route) : fc.constant(undefined);
  const types = route.request?.bodyTypes ?? ['json'];
  const contentType = fc.constantFrom(...types.map((t) => (t === 'json' ? 'application/json' : 'application/x-www-form-urlencoded')));
  return fc.record({ located, body, contentType, mutation }).map(({ located: { params: p, query: q }, body: b, contentType: ct, mutation: m }) => {
    const pathParams = { ...(p as Record<string, string>) };
    const queryParams = Object.entries((q ?? {}) as Record<string, unknown>).filter(([, val]) => val !== undefined).map(([k, val]) => [k, String(val)] as [string, string]);
    let bodyValue = b;
    let raw: string | undefined;
    let method: string = route.method;
    let type: string | undefined = hasBody ? ct : undefined;
    let token: string | undefined = route.auth === 'token' ? ctx.token : undefined;
    const fields = bodyValue && typeof bodyValue === 'object' && !Array.isArray(bodyValue) ? Object.keys(bodyValue) : [];
    const target = (): Json | undefined => {
      if (Array.isArray(bodyValue) && bodyValue[0] && typeof bodyValue[0] === 'object') return bodyValue[0] as Json;
      return bodyValue && typeof bodyValue === 'object' && !Array.isArray(bodyValue) ? (bodyValue as Json) : undefined;
    };
    switch (m.kind) {
      case 'field': {
        const t = target();
        const names = t ? Object.keys(t) : [];
        if (t && names.length) t[names[m.pick % names.length]] = m.value;
        else if (queryParams.length) queryParams[m.pick % queryParams.length][1] = String(m.value);
        break;
      }
      case 'drop': {
        const t = target();
        const names = t ? Object.keys(t) : [];
        if (t && names.length) delete t[names[m.pick % names.length]];
        else if (queryParams.length) queryParams.splice(m.pick % queryParams.length, 1);
        break;
      }
      case 'extra': {
        const t = target();
        if (t) t[m.name] = m.value;
        else queryParams.push([m.name, String(m.value)]);
        break;
      }
      case 'storage': {
        // A storage edge value in an existing field (numbers, ids, times) or in a data_* field.
        const t = target();
        const names = t ? Object.keys(t) : [];
        if (t && m.field && names.length) t[names[m.pick % names.length]] = m.value;
        else if (t) t[m.name] = m.value;
        else if (queryParams.length) queryParams[m.pick % queryParams.length][1] = String(m.value);
        break;
      }
      case 'body':
        if (hasBody) bodyValue = m.value;
        else {
          raw = JSON.stringify(m.value) ?? 'null';
          type = 'application/json';
        }
        break;
      case 'raw': {
        const encoded = encodeBody(bodyValue, 'application/json');
        const first = fields[0] ?? 'email';
        raw = {
          duplicate: `${encoded.replace(/\}$/, '')}${fields.length ? ',' : '{'}${JSON.stringify(first)}:${JSON.stringify(m.value) ?? 'null'}}`,
          deep: `${'['.repeat(5000)}${']'.repeat(5000)}`,
          'deep-data': `{"email":${JSON.stringify(EMAILS[0])},"form_key":"x","data_x":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`,
          invalid: encoded.slice(0, Math.max(1, encoded.length - 1)),
          bom: `\ufeff${encoded}`,
          empty: '',
        }[m.template];
        type ??= 'application/json';
        break;
      }
      case 'content-type':
        type = m.value;
        break;
      case 'param': {
        const names = Object.keys(pathParams);
        if (names.length) pathParams[names[m.pick % names.length]] = m.value;
        break;
      }
      case 'query':
        queryParams.push([m.name, m.value]);
        break;
      case 'token':
        token = m.value;
        break;
      case 'method':
        method = m.value;
        break;
    }
    if (raw === undefined && bodyValue !== undefined) raw = encodeBody(bodyValue, type ?? 'application/json');
    const headers: Record<string, string> = {};
    if (type !== undefined && raw !== undefined) headers['content-type'] = type;
    if (token !== undefined) headers['x-service-client-token'] = token;
    return { method, path: fillPath(route.path, pathParams), query: queryParams, headers, raw, mutation: describeMutation(m) };
  });
}

function describeMutation(m: Mutation): string {
  const show = (value: unknown) => {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- only when JSON.stringify threw (a cycle, a BigInt): the default string is all there is to show
    const s = typeof value === 'string' ? JSON.stringify(value) : value === undefined ? 'undefined' : (() => { try { return JSON.stringify(value); } catch { return String(value); } })();
    return (s ?? String(value)).slice(0, 80);
  };
  switch (m.kind) {
    case 'none':
      return 'valid';
    case 'field':
      return `field#${m.pick} = ${show(m.value)}`;
    case 'drop':
      return `drop field#${m.pick}`;
    case 'extra':
      return `extra ${show(m.name)} = ${show(m.value)}`;
    case 'storage':
      return `storage edge ${m.field ? `field#${m.pick}` : show(m.name)} = ${show(m.value)}`;
    case 'body':
      return `body = ${show(m.value)}`;
    case 'raw':
      return `raw ${m.template}`;
    case 'content-type':
      return `content-type ${show(m.value)}`;
    case 'param':
      return `param#${m.pick} = ${show(m.value)}`;
    case 'query':
      return `query ${show(m.name)} = ${show(m.value)}`;
    case 'token':
      return `token ${show(m.value?.slice(0, 20))}`;
    case 'method':
      return `method ${m.value}`;
  }
}

/**
 * What a 4xx must leave unchanged for the client: its lists, files, counts,
 * subscribers, pending opt-ins, readers' histories and preferences, the
 * catalogue, the event and import objects.
 */
export async function clientState(ctx: FuzzContext): Promise<string> {
  const query = (pk: string) => queryAll({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true });
  const [client, subs, counts, catalogue, byPublished, ...rest] = await Promise.all([
    query(`CLIENT#${ctx.username}`),
    query(keys.subscribersPartition(ctx.username, ctx.listId)),
    query(keys.countersPartition(ctx.username, ctx.listId)),
    queryAll({ TableName: tableName(), IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': keys.articlesByHotness(ctx.username) } }),
    // The catalogue's own index: articles no reader has viewed yet are only here.
    queryAll({ TableName: tableName(), IndexName: 'gsi2', KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': keys.articlesByPublished(ctx.username) } }),
    ...USER_IDS.map((id) => query(keys.reader(ctx.username, id).pk)),
    ...EMAILS.map((email) => query(keys.optinPendingPartition(ctx.username, email.toLowerCase()))),
  ]);
  const objects = await Promise.all(
    [
      [config.eventsBucket, `raw/${ctx.username}/`],
      [config.importsBucket, `uploads/${ctx.username}/`],
    ].map(async ([Bucket, Prefix]) => ((await s3.send(new ListObjectsV2Command({ Bucket, Prefix }))).Contents ?? []).map((o) => o.Key).sort()),
  );
  const canonical = (value: unknown): unknown =>
    value && typeof value === 'object'
      ? Array.isArray(value)
        ? value.map(canonical)
        : Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Json)[k])]))
      : value;
  const byKey = (items: Array<Record<string, unknown>>) => items.map((i) => JSON.stringify(canonical(i))).sort();
  return JSON.stringify({
    client: byKey(client),
    subs: byKey(subs),
    counts: byKey(counts),
    catalogue: byKey(catalogue),
    byPublished: byKey(byPublished),
    readers: rest.map(byKey),
    objects,
  });
}
