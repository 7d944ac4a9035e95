/** Rows of the route table (shared/routes.ts): lists, their subscribers, users/delete and the deprecated list-less API. */
import * as v from 'valibot';
import type { HeaderName } from '../http/header-docs.js';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { ListIdParamsSchema, ListSchema } from '../lists/schemas.js';
import { CountSchema, DEFAULT_PAGE, ListingQuerySchema, MAX_LINES, MAX_PAGE, ReportSchema, SubscribersBodyDoc, SubscribersBodySchema, LegacySubscriberSchema, UsersDeleteBodyDoc, UsersDeleteBodySchema } from '../subscribers/schemas.js';
import { InvalidRequestSchema } from '../http/schemas.js';
import { ListedSubscriberSchema } from '../readers/listing-schema.js';
import { MAX_STORED_DEPTH, MIN_STORED_FRACTION } from '../db/storable.js';
import { MAX_DATA_BYTES, MAX_STORED_DATA_BYTES } from '../subscribers/data.js';
import { count } from './format.js';

/** The headers of every answer of the deprecated list-less API. */
const DEPRECATED: HeaderName[] = ['deprecation', 'sunset', 'link'];

export const subscriberRoutes = {
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
    description: 'Exact once the table stream has drained (about a second after a write; docs/api.md): then equal to a recount of the list. Counters of unsubscribed subscribers by cause.',
    tags: ['subscribers'],
    request: { params: ListIdParamsSchema },
    responses: { 200: { description: 'The count (spec 2.5)', schema: CountSchema }, 401: errorResponses[401], 404: { description: 'Unknown list', schema: ErrorSchema } },
  },
  subscribersList: {
    method: 'GET',
    path: '/v1/newsletters/lists/{list_id}/subscribers',
    handler: 'functions/subscribers-list.ts',
    auth: 'token',
    // RW: the client's link secret is made the first time its links are listed.
    access: { table: 'RW' },
    summary: 'Page through the subscribers of a list',
    description:
      `Ordered by email. \`search\` is a case-insensitive prefix of the email. \`count\` defaults to ${DEFAULT_PAGE}, at most ${MAX_PAGE}. ` +
      'The response headers `X-Next-Cursor` and `Link: <…>; rel="next"` continue after the page at constant cost (pass `cursor`, not `offset`).',
    tags: ['subscribers'],
    request: { params: ListIdParamsSchema, query: ListingQuerySchema },
    responses: { 200: { description: 'Subscribers (spec 2.3)', schema: v.array(ListedSubscriberSchema), headers: ['x-next-cursor', 'link'] }, 400: errorResponses[400], 401: errorResponses[401], 404: { description: 'Unknown list', schema: ErrorSchema } },
  },
  subscribersPost: {
    method: 'POST',
    path: '/v1/newsletters/lists/{list_id}/subscribers',
    handler: 'functions/subscribers-post.ts',
    auth: 'token',
    access: { table: 'RW', events: 'W' },
    summary: `Subscribe, unsubscribe or update one subscriber or a batch of up to ${count(MAX_LINES)}`,
    description:
      'Invalid lines are reported in `report.errors` and skipped; valid lines are applied. An address given twice: the last line wins. Counter definitions: docs/api.md. ' +
      `\`data_*\` values: numbers from -(2^53-1) to 2^53-1 (0 or at least ${MIN_STORED_FRACTION} in magnitude), at most ${MAX_STORED_DEPTH} levels of nesting, no empty keys, at most ${count(MAX_DATA_BYTES)} bytes of JSON per line and ${count(MAX_STORED_DATA_BYTES)} stored per subscriber.`,
    tags: ['subscribers'],
    request: { params: ListIdParamsSchema, body: SubscribersBodySchema, bodyDoc: SubscribersBodyDoc },
    idempotencyKey: true,
    responses: {
      200: { description: 'The report (spec 2.6)', schema: ReportSchema },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'Unknown list', schema: ErrorSchema },
      415: errorResponses[415],
      500: { description: 'A storage error a retry cannot cure (a bug; logged); the cause says how much was applied', schema: ErrorSchema },
      503: {
        description:
          `Storage fault a retry can cure (throttling, a 5xx, a timeout), or the request's time ran out, after part of the batch was applied; the cause says how much; \`Retry-After\`; retrying is safe`,
        schema: ErrorSchema,
      },
    },
    lambda: { timeoutSeconds: 29, memoryMb: 1024 },
  },
  usersDelete: {
    method: 'POST',
    path: '/v1/users/delete',
    handler: 'functions/users-delete.ts',
    auth: 'token',
    // events W: one nl_delete record per subscription removed (the change subscriber.deleted).
    access: { table: 'RW', events: 'W' },
    summary: 'Delete users from all lists of the client',
    description: `Up to ${count(MAX_LINES)} \`{email}\`. Any invalid email rejects the whole request; nothing is deleted. n is the number of distinct addresses given. Each subscription removed (list and address) sends one \`subscriber.deleted\` change to the webhooks and the change bus; an address already gone sends nothing.`,
    tags: ['subscribers'],
    request: { body: UsersDeleteBodySchema, bodyDoc: UsersDeleteBodyDoc },
    idempotencyKey: true,
    responses: {
      200: { description: '`{success: "<n> users have been deleted"}`', schema: v.object({ success: v.string() }) },
      400: errorResponses[400],
      401: errorResponses[401],
      415: errorResponses[415],
      503: {
        description: 'A storage fault a retry can cure, or the request ran out of time; `Retry-After`; retrying is safe (addresses already deleted stay deleted)',
        schema: ErrorSchema,
      },
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
    // RW: the client's link secret is made the first time its links are listed.
    access: { table: 'RW' },
    summary: 'Deprecated: page through the default list',
    tags: ['deprecated'],
    deprecated: true,
    request: { query: ListingQuerySchema },
    responses: { 200: { description: 'As GET …/lists/{list_id}/subscribers on the default list', schema: v.array(ListedSubscriberSchema), headers: [...DEPRECATED, 'x-next-cursor'] }, 400: errorResponses[400], 401: errorResponses[401] },
  },
  legacySubscribersPost: {
    method: 'POST',
    path: '/v1/newsletters/subscribers',
    handler: 'functions/legacy-subscribers-post.ts',
    auth: 'token',
    access: { table: 'RW', events: 'W' },
    summary: `Deprecated: subscribe one subscriber or up to ${count(MAX_LINES)} to the default list`,
    description: 'Any invalid line rejects the whole request (`INVALID_REQUEST` with line numbers); nothing is written.',
    tags: ['deprecated'],
    deprecated: true,
    legacyErrors: true,
    idempotencyKey: true,
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
} as const satisfies Record<string, RouteDef>;
