/** Rows of the route table (shared/routes.ts): a reader's theme preferences, a group of their own so that their functions do not bundle the other recommendation routes. */
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { LIMITS } from '../recos/limits.js';
import { ARTICLE_TEXT_LIMITS, PreferencesBodySchema, PreferencesParamsSchema, PreferencesQuerySchema, PreferencesSchema } from '../recos/schemas.js';

export const preferenceRoutes = {
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
    description: `Replaces the themes (array or comma-separated string; trimmed, lower-cased, at most ${LIMITS.preferencesPerReader} of ${ARTICLE_TEXT_LIMITS.theme} characters); \`[]\` clears them. The themes match the \`service:themes\` meta of articles.`,
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
} as const satisfies Record<string, RouteDef>;
