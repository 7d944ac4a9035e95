/**
 * The route table: every HTTP endpoint of the service, once. The CDK stack
 * builds one function per row and the local gateway routes to the same
 * handlers; the OpenAPI document is generated from it. Plain data only.
 */
import * as v from 'valibot';
import { TokenQuerySchema, TokenSchema } from './auth/schemas.js';
import type { HeaderName } from './http/header-docs.js';
import type { RouteDef } from './http/route.js';
import { ErrorSchema, errorResponses } from './http/schemas.js';
import { ListIdParamsSchema, ListSchema } from './lists/schemas.js';
import {
  CountSchema,
  ListingQuerySchema,
  ReportSchema,
  SubscriberInputSchema,
  SubscriberOutputSchema,
  SubscribersBodyDoc,
  SubscribersBodySchema,
  LegacySubscriberSchema,
  UsersDeleteBodyDoc,
  UsersDeleteBodySchema,
} from './subscribers/schemas.js';
import { InvalidRequestSchema } from './http/schemas.js';
import { ConfirmParamsSchema, SubscribeBodyDoc, SubscribeBodySchema, SubscribeParamsSchema, SubscribeResultSchema } from './optin/schemas.js';
import {
  LegacyRecommendationsSchema,
  PreferencesBodySchema,
  PreferencesParamsSchema,
  PreferencesQuerySchema,
  PreferencesSchema,
  RecommendationsParamsSchema,
  RecommendationsQuerySchema,
  RedirectParamsSchema,
  RedirectQuerySchema,
  SmartSectionSchema,
  TrackBodySchema,
  TrackParamsSchema,
  TrackResultSchema,
} from './recos/schemas.js';
import { EventFileParamsSchema, EventFileQuerySchema } from './events/schemas.js';
import { FileIdParamsSchema, ImportBodySchema, ImportedFileSchema } from './imports/schemas.js';

/** The headers of every answer of the deprecated list-less API. */
const DEPRECATED: HeaderName[] = ['deprecation', 'sunset', 'link'];
/** The headers of the confirmation link's pages. */
const PRIVATE_PAGE: HeaderName[] = ['cache-control', 'referrer-policy', 'x-robots-tag'];

export const routes = {
  tokenGet: {
    method: 'GET',
    path: '/v1/token',
    handler: 'functions/token-get.ts',
    auth: 'none',
    access: { table: 'RW' },
    summary: 'Get a temporary client token',
    description:
      'Exchanges the client name and API key for a token valid for TOKEN_TTL_SECONDS (default 3600). Wrong name or key: 401 with one cause for both. ' +
      'Rotating the API key revokes every token issued before. Failed attempts from one source address are limited (5 per client name, 20 in all, per 15-minute window): beyond, 429 with Retry-After, before any key check.',
    tags: ['auth'],
    request: { query: TokenQuerySchema },
    responses: {
      200: { description: 'A new token', schema: TokenSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      401: { description: 'Invalid username or password', schema: ErrorSchema },
      429: { description: 'Too many failed logins from this source address; Retry-After says when to try again', schema: ErrorSchema },
    },
  },
  listsList: {
    method: 'GET',
    path: '/v1/newsletters/lists',
    handler: 'functions/lists-list.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "The client's lists",
    tags: ['lists'],
    responses: { 200: { description: 'Lists by id', schema: v.array(ListSchema) }, 401: errorResponses[401] },
  },
  subscribersCount: {
    method: 'GET',
    path: '/v1/newsletters/lists/{list_id}/subscribers/count',
    handler: 'functions/subscribers-count.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: 'Count the subscribers of a list',
    description: 'Exact: always equal to a recount of the list. Counters of unsubscribed subscribers by cause.',
    tags: ['subscribers'],
    request: { params: ListIdParamsSchema },
    responses: { 200: { description: 'The count (spec 2.5)', schema: CountSchema }, 401: errorResponses[401], 404: { description: 'Unknown list', schema: ErrorSchema } },
  },
  subscribersList: {
    method: 'GET',
    path: '/v1/newsletters/lists/{list_id}/subscribers',
    handler: 'functions/subscribers-list.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: 'Page through the subscribers of a list',
    description:
      'Ordered by email. `search` is a case-insensitive prefix of the email. `count` defaults to 100, at most 1000. ' +
      'The response headers `X-Next-Cursor` and `Link: <…>; rel="next"` continue after the page at constant cost (pass `cursor`, not `offset`).',
    tags: ['subscribers'],
    request: { params: ListIdParamsSchema, query: ListingQuerySchema },
    responses: { 200: { description: 'Subscribers (spec 2.3)', schema: v.array(SubscriberOutputSchema), headers: ['x-next-cursor', 'link'] }, 400: errorResponses[400], 401: errorResponses[401], 404: { description: 'Unknown list', schema: ErrorSchema } },
  },
  subscribersPost: {
    method: 'POST',
    path: '/v1/newsletters/lists/{list_id}/subscribers',
    handler: 'functions/subscribers-post.ts',
    auth: 'token',
    access: { table: 'RW', events: 'W' },
    summary: 'Subscribe, unsubscribe or update one subscriber or a batch of up to 20,000',
    description:
      'Invalid lines are reported in `report.errors` and skipped; valid lines are applied. An address given twice: the last line wins. Counter definitions: docs/api.md. ' +
      '`data_*` values: numbers from -(2^53-1) to 2^53-1 (0 or at least 1e-130 in magnitude), at most 16 levels of nesting, no empty keys, at most 10,240 bytes of JSON per line and 65,536 stored per subscriber.',
    tags: ['subscribers'],
    request: { params: ListIdParamsSchema, body: SubscribersBodySchema, bodyDoc: SubscribersBodyDoc },
    responses: {
      200: { description: 'The report (spec 2.6)', schema: ReportSchema },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'Unknown list', schema: ErrorSchema },
      415: errorResponses[415],
      500: { description: 'A storage error a retry cannot cure (a bug; logged); the cause says how much was applied', schema: ErrorSchema },
      503: { description: 'Storage fault a retry can cure (throttling, a 5xx, a timeout) after part of the batch was applied; the cause says how much; retrying is safe', schema: ErrorSchema },
    },
    lambda: { timeoutSeconds: 29, memoryMb: 1024 },
  },
  usersDelete: {
    method: 'POST',
    path: '/v1/users/delete',
    handler: 'functions/users-delete.ts',
    auth: 'token',
    access: { table: 'RW' },
    summary: 'Delete users from all lists of the client',
    description: 'Up to 20,000 `{email}`. Any invalid email rejects the whole request; nothing is deleted. n is the number of distinct addresses given.',
    tags: ['subscribers'],
    request: { body: UsersDeleteBodySchema, bodyDoc: UsersDeleteBodyDoc },
    responses: {
      200: { description: '`{success: "<n> users have been deleted"}`', schema: v.object({ success: v.string() }) },
      400: errorResponses[400],
      401: errorResponses[401],
      415: errorResponses[415],
    },
    lambda: { timeoutSeconds: 29, memoryMb: 1024 },
  },
  legacySubscribersCount: {
    method: 'GET',
    path: '/v1/newsletters/subscribers/count',
    handler: 'functions/legacy-subscribers-count.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: 'Deprecated: count of the default list',
    tags: ['deprecated'],
    deprecated: true,
    responses: { 200: { description: 'As GET …/lists/{list_id}/subscribers/count on the default list', schema: CountSchema, headers: DEPRECATED }, 401: errorResponses[401] },
  },
  legacySubscribersList: {
    method: 'GET',
    path: '/v1/newsletters/subscribers',
    handler: 'functions/legacy-subscribers-list.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: 'Deprecated: page through the default list',
    tags: ['deprecated'],
    deprecated: true,
    request: { query: ListingQuerySchema },
    responses: { 200: { description: 'As GET …/lists/{list_id}/subscribers on the default list', schema: v.array(SubscriberOutputSchema), headers: [...DEPRECATED, 'x-next-cursor'] }, 400: errorResponses[400], 401: errorResponses[401] },
  },
  legacySubscribersPost: {
    method: 'POST',
    path: '/v1/newsletters/subscribers',
    handler: 'functions/legacy-subscribers-post.ts',
    auth: 'token',
    access: { table: 'RW', events: 'W' },
    summary: 'Deprecated: subscribe one subscriber or up to 20,000 to the default list',
    description: 'Any invalid line rejects the whole request (`INVALID_REQUEST` with line numbers); nothing is written.',
    tags: ['deprecated'],
    deprecated: true,
    legacyErrors: true,
    request: { body: SubscribersBodySchema, bodyDoc: v.union([LegacySubscriberSchema, SubscribersBodyDoc.options[1]]) },
    responses: {
      200: { description: '`{success: "<n> subscriber(s) processed", report}`', schema: v.object({ success: v.string(), report: ReportSchema.entries.report }), headers: DEPRECATED },
      400: { description: 'Invalid lines', schema: InvalidRequestSchema },
      401: errorResponses[401],
      415: errorResponses[415],
      500: { description: 'A storage error a retry cannot cure (a bug; logged)', schema: ErrorSchema },
      503: { description: 'Storage fault a retry can cure; retrying is safe', schema: ErrorSchema },
    },
    lambda: { timeoutSeconds: 29, memoryMb: 1024 },
  },
  eventsGet: {
    method: 'GET',
    path: '/v1/newsletters/events/{event_name}/{date}',
    handler: 'functions/events-get.ts',
    auth: 'token',
    access: { table: 'R', events: 'RW' },
    summary: 'The CSV file of one event type and UTC day (premium)',
    description:
      'Header of spec §6, then one line per event sorted by date (UTC, YYYY-MM-DD HH:MM:SS). Today (and yesterday until 00:10 UTC) is assembled on the fly and marked `X-Events-Incomplete: true`. A day without events: the header line alone. Files above EVENTS_INLINE_MAX_BYTES: 302 to a presigned S3 URL valid EVENTS_URL_TTL_SECONDS. Cells are formula-safe by default (OWASP CSV injection: a leading apostrophe before `=`, `+`, `-`, `@`, tab, CR); `raw=true` asks for the values as recorded.',
    tags: ['events'],
    request: { params: EventFileParamsSchema, query: EventFileQuerySchema },
    responses: {
      200: {
        description: 'The CSV file. Cells that would begin with `=`, `+`, `-`, `@`, tab or CR get a leading apostrophe so no spreadsheet evaluates them; `raw=true` serves the recorded values',
        contentType: 'text/csv; charset=utf-8',
        headers: ['x-events-incomplete', 'content-disposition', 'cache-control'],
      },
      302: { description: 'Large file: Location is a short-lived presigned S3 URL', headers: ['location', 'x-events-incomplete', 'cache-control'] },
      400: errorResponses[400],
      401: errorResponses[401],
      403: { description: 'Premium events not enabled for the client', schema: ErrorSchema },
    },
    lambda: { timeoutSeconds: 29, memoryMb: 1024 },
  },
  filesCreate: {
    method: 'POST',
    path: '/v1/files',
    handler: 'functions/files-create.ts',
    auth: 'token',
    access: { table: 'RW', imports: 'RW' },
    summary: 'Import a CSV file by URL into a list',
    description:
      'Downloads the file (http/https only; private, loopback, link-local, CGNAT, multicast and metadata addresses refused, also after redirects; size and time limits IMPORT_MAX_BYTES, IMPORT_FETCH_TIMEOUT_MS), stores it and answers 201 with the imported file in status `uploaded`; a worker then applies it (`processing` → `done` | `failed`, see GET /v1/files/{file_id}).',
    tags: ['imports'],
    request: { body: ImportBodySchema },
    responses: {
      201: { description: 'The file is stored; processing continues asynchronously. Location: /v1/files/{file_id}', schema: ImportedFileSchema, headers: ['location'] },
      400: { description: 'Invalid body, or a URL that is refused or could not be fetched (`cause` starts with `url:`)', schema: ErrorSchema },
      401: errorResponses[401],
      404: { description: 'Unknown list', schema: ErrorSchema },
      415: errorResponses[415],
    },
    lambda: { timeoutSeconds: 29, memoryMb: 512 },
  },
  filesList: {
    method: 'GET',
    path: '/v1/files',
    handler: 'functions/files-list.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "The client's imported files with status and progress",
    tags: ['imports'],
    responses: { 200: { description: 'Imported files by id', schema: v.array(ImportedFileSchema) }, 401: errorResponses[401] },
  },
  filesGet: {
    method: 'GET',
    path: '/v1/files/{file_id}',
    handler: 'functions/files-get.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: 'One imported file with status, progress and its first errors',
    tags: ['imports'],
    request: { params: FileIdParamsSchema },
    responses: {
      200: { description: 'The imported file', schema: ImportedFileSchema },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'Unknown file', schema: ErrorSchema },
    },
  },
  openapiGet: {
    method: 'GET',
    path: '/v1/openapi.json',
    handler: 'functions/openapi-get.ts',
    auth: 'none',
    access: {},
    summary: 'This API description (OpenAPI 3.1)',
    tags: ['meta'],
    responses: { 200: { description: 'The OpenAPI document', schema: v.record(v.string(), v.unknown()) } },
  },
  docsGet: {
    method: 'GET',
    path: '/v1/docs',
    handler: 'functions/docs-get.ts',
    auth: 'none',
    access: {},
    summary: 'The API reference, readable (Redoc)',
    description: 'An HTML page rendering /v1/openapi.json with Redoc, served by this API (no CDN).',
    tags: ['meta'],
    responses: { 200: { description: 'The reference page', contentType: 'text/html; charset=utf-8', headers: ['cache-control', 'content-security-policy'] } },
  },
  docsScriptGet: {
    method: 'GET',
    path: '/v1/docs/redoc.standalone.js',
    handler: 'functions/docs-script-get.ts',
    auth: 'none',
    access: {},
    assets: { 'redoc.standalone.js': 'redoc/bundles/redoc.standalone.js' },
    summary: "The reference page's renderer (Redoc's standalone script)",
    description: 'Shipped beside the function, not bundled into it.',
    tags: ['meta'],
    responses: { 200: { description: 'The script', contentType: 'application/javascript; charset=utf-8', headers: ['cache-control', 'x-content-type-options'] } },
  },
  subscribePost: {
    method: 'POST',
    path: '/v1/subscribe/{tracking_key}',
    handler: 'functions/subscribe-post.ts',
    auth: 'key',
    access: { table: 'RW', events: 'W', mail: true },
    summary: 'Double opt-in subscription from a form (JSON or an HTML form)',
    description:
      'No token: the tracking key (path) and form_key (body) identify the client. A new address gets a confirmation email; an address already subscribed gets the same answer and nothing changes; update=true updates a known subscriber without email. Rate limits: 5 per IP and 10 overall per minute by default (per client), 429 with Retry-After beyond.',
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
      "Single use: subscribes the address to the form's lists, then shows a small page or redirects to the form's confirmation URL. A second click changes nothing. An unknown or expired link: 404 page.",
    tags: ['opt-in'],
    request: { params: ConfirmParamsSchema },
    responses: {
      200: { description: 'Confirmation page', contentType: 'text/html; charset=utf-8', headers: [...PRIVATE_PAGE, 'content-security-policy'] },
      302: { description: "Redirect to the form's confirmation URL", headers: ['location', ...PRIVATE_PAGE] },
      400: { description: 'Not a link token at all', schema: ErrorSchema },
      404: { description: 'Link not valid or expired (HTML page)', contentType: 'text/html; charset=utf-8', headers: [...PRIVATE_PAGE, 'content-security-policy'] },
    },
  },
  recosGet: {
    method: 'GET',
    path: '/v1/clients/{block_key}/users/{user_id}/recommendations',
    handler: 'functions/recos-get.ts',
    auth: 'key',
    access: { table: 'R' },
    summary: "A reader's recommendations for a block (smart section)",
    description:
      'The page being read is `page_url`, else the `referer` header. `format` (else the block setting `envelope`) picks the smart-section envelope `{result: {recommendation}, algo, status}` or the earlier `{count, start, recommendations}`. `callback` returns JSONP (application/javascript). `published_time` is Unix seconds. At most 4 DynamoDB calls (docs/architecture.md).',
    tags: ['recommendations'],
    request: { params: RecommendationsParamsSchema, query: RecommendationsQuerySchema },
    responses: {
      200: {
        description: 'Recommendations (JSON; with `callback`, JSONP: `callback(<the same JSON>);` as application/javascript)',
        schema: v.union([SmartSectionSchema, LegacyRecommendationsSchema]),
        alternatives: [{ contentType: 'application/javascript' }],
        headers: ['cache-control', 'x-content-type-options'],
      },
      400: errorResponses[400],
      403: { description: 'The client requires signed reader ids and `sig` is missing or wrong (JSON, also for JSONP requests)', schema: ErrorSchema },
      404: { description: 'Unknown block key', schema: ErrorSchema },
    },
  },
  trackPost: {
    method: 'POST',
    path: '/v1/track/{tracking_key}',
    handler: 'functions/track-post.ts',
    auth: 'key',
    access: { table: 'RW' },
    summary: 'Record a page view (navigation tracking)',
    description:
      'JSON, or a form body (what the browser library sends with sendBeacon: no CORS preflight). `themes` is an array or a comma-separated string; `published_time` Unix seconds 0 to 253402300799 (milliseconds accepted, up to 253402300799999) or ISO 8601 up to 9999-12-31.',
    tags: ['recommendations'],
    request: { params: TrackParamsSchema, body: TrackBodySchema, bodyTypes: ['json', 'form'] },
    responses: {
      200: { description: 'Recorded; `guid` is the article id', schema: TrackResultSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      403: { description: "The URL's host is not one of the client's site hosts (or the client has none yet), or the client requires signed reader ids and `sig` is missing or wrong", schema: ErrorSchema },
      404: { description: 'Unknown tracking key', schema: ErrorSchema },
      415: { description: 'Body neither JSON nor a form', schema: ErrorSchema },
    },
  },
  redirectGet: {
    method: 'GET',
    path: '/v1/r/{block_key}/{guid}',
    handler: 'functions/redirect-get.ts',
    auth: 'key',
    access: { table: 'RW' },
    summary: 'Follow a recommendation (counts the click, 302 to the article)',
    description: 'Leads only to a known article of the block\'s client on its site hosts (counted as a click); `https=1` upgrades the target to https.',
    tags: ['recommendations'],
    request: { params: RedirectParamsSchema, query: RedirectQuerySchema },
    responses: { 302: { description: 'To the article', headers: ['location', 'cache-control'] }, 400: errorResponses[400], 404: { description: 'Unknown block key or article', schema: ErrorSchema } },
  },
  preferencesGet: {
    method: 'GET',
    path: '/v1/users/{user_id}/preferences',
    handler: 'functions/recos-preferences-get.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "A reader's theme preferences (spec 4.13)",
    description: 'A reader without preferences has `themes: []` and `updated_at: null`.',
    tags: ['recommendations'],
    request: { params: PreferencesParamsSchema, query: PreferencesQuerySchema },
    responses: { 200: { description: 'The preferences', schema: PreferencesSchema, headers: ['cache-control'] }, 400: errorResponses[400], 401: errorResponses[401], 403: { description: 'The client requires signed reader ids and `sig` is missing or wrong (JSON, also for JSONP requests)', schema: ErrorSchema } },
  },
  preferencesPut: {
    method: 'PUT',
    path: '/v1/users/{user_id}/preferences',
    handler: 'functions/recos-preferences-put.ts',
    auth: 'token',
    access: { table: 'RW' },
    summary: "Set a reader's theme preferences (spec 4.13)",
    description: 'Replaces the themes (array or comma-separated string; trimmed, lower-cased, at most 50 of 64 characters); `[]` clears them. The themes match the `service:themes` meta of articles.',
    tags: ['recommendations'],
    request: { params: PreferencesParamsSchema, query: PreferencesQuerySchema, body: PreferencesBodySchema },
    responses: {
      200: { description: 'The preferences now', schema: PreferencesSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      401: errorResponses[401],
      403: { description: 'The client requires signed reader ids and `sig` is missing or wrong (JSON, also for JSONP requests)', schema: ErrorSchema },
      415: errorResponses[415],
    },
  },
  libraryGet: {
    method: 'GET',
    path: '/lib/v1',
    handler: 'functions/recos-library-get.ts',
    auth: 'none',
    access: {},
    summary: 'The browser library ({script_url}/v1)',
    tags: ['recommendations'],
    responses: { 200: { description: 'The library script', contentType: 'application/javascript; charset=utf-8', headers: ['cache-control', 'x-content-type-options'] } },
  },
} as const satisfies Record<string, RouteDef>;

export type RouteId = keyof typeof routes;

/** Rows as a list, for the stack, the gateway and the OpenAPI document. */
export const routeList = Object.entries(routes).map(([id, route]) => ({ id, ...(route as RouteDef) }));

/**
 * Requests that match no row go to this function (API Gateway's `$default`
 * route; the local gateway does the same): 404 for an unknown path, 405 for a
 * known path with another method.
 */
export const fallbackHandler = 'functions/fallback.ts';
