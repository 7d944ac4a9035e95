/**
 * The route table: every HTTP endpoint of the service, once. The CDK stack
 * builds one function per row and the local gateway routes to the same
 * handlers; the OpenAPI document is generated from it. Plain data only.
 */
import * as v from 'valibot';
import { TokenQuerySchema, TokenSchema } from './auth/schemas.js';
import type { RouteDef } from './http/route.js';
import { ErrorSchema, errorResponses } from './http/schemas.js';
import { ListSchema } from './lists/schemas.js';

export const routes = {
  tokenGet: {
    method: 'GET',
    path: '/v1/token',
    handler: 'functions/token-get.ts',
    auth: 'none',
    access: { table: 'RW' },
    summary: 'Get a temporary client token',
    description: 'Exchanges the client name and API key for a token valid for TOKEN_TTL_SECONDS (default 3600). Wrong name or key: 401 with one cause for both.',
    tags: ['auth'],
    request: { query: TokenQuerySchema },
    responses: { 200: { description: 'A new token', schema: TokenSchema }, 400: errorResponses[400], 401: { description: 'Invalid username or password', schema: ErrorSchema } },
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
  openapiGet: {
    method: 'GET',
    path: '/v1/openapi.json',
    handler: 'functions/openapi-get.ts',
    auth: 'none',
    access: {},
    summary: 'This API description (OpenAPI 3.1)',
    tags: ['meta'],
    responses: { 200: { description: 'The OpenAPI document' } },
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
