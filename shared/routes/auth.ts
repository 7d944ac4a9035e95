/** Rows of the route table (shared/routes.ts): the token endpoint. */
import { TokenQuerySchema, TokenSchema } from '../auth/schemas.js';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { LOGIN_LIMITS } from '../ratelimit/policy.js';
import { DEFAULT_TOKEN_TTL_SECONDS } from '../config.js';

export const authRoutes = {
  tokenGet: {
    method: 'GET',
    path: '/v1/token',
    handler: 'functions/token-get.ts',
    auth: 'none',
    access: { table: 'RW' },
    summary: 'Get a temporary client token',
    description:
      `Exchanges the client name and API key for a token valid for TOKEN_TTL_SECONDS (default ${DEFAULT_TOKEN_TTL_SECONDS}). Wrong name or key: 401 with one cause for both. ` +
      'Rotating the API key revokes every token issued before. ' +
      `Failed attempts from one source address are limited (${LOGIN_LIMITS.perNameAndIp} per client name, ${LOGIN_LIMITS.perIp} in all, per ${LOGIN_LIMITS.windowMinutes}-minute window): beyond, 429 with Retry-After, before any key check.`,
    tags: ['auth'],
    request: { query: TokenQuerySchema },
    responses: {
      200: { description: 'A new token', schema: TokenSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      401: { description: 'Invalid username or password', schema: ErrorSchema },
      429: { description: 'Too many failed logins from this source address; Retry-After says when to try again', schema: ErrorSchema },
    },
  },
} as const satisfies Record<string, RouteDef>;
