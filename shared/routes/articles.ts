/** Rows of the route table (shared/routes.ts): the article catalogue of recommendations. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { count } from './format.js';
import { ARTICLES_PAGE, ArticleDeletedSchema, ArticleDeleteQuerySchema, ArticleOutputSchema, ArticlesBodyDoc, ArticlesBodySchema, ArticlesQuerySchema, ArticlesReportSchema, MAX_ARTICLES_PER_REQUEST } from '../recos/schemas.js';

const NO_SITE_HOSTS = { description: "The client has no site hosts yet, so the catalogue is off (support sets them: admin set-hosts)", schema: ErrorSchema };

export const articleRoutes = {
  articlesPut: {
    method: 'PUT',
    path: '/v1/articles',
    handler: 'functions/articles-put.ts',
    auth: 'token',
    access: { table: 'RW' },
    summary: `Add or update articles of the catalogue (1 to ${count(MAX_ARTICLES_PER_REQUEST)})`,
    description:
      'Each line: `url` required (canonicalised as tracking does: no fragment, no campaign parameters; its host must be one of the client\'s site hosts), then `title`, `description`, `image`, `category`, `themes` (array or comma-separated), `published_time` (Unix seconds, milliseconds or ISO 8601; now when a new article does not say). ' +
      'Given fields replace the stored ones, absent ones are kept; views, clicks and co-visits are never touched. Lines are checked one by one: a bad line is `rejected` with its cause and the others are applied. Two lines for the same article: the last one is applied. ' +
      'A catalogue article no reader has viewed yet is recommended while it is fresh (the block\'s freshness window). A deleted article comes back only through this route.',
    tags: ['articles'],
    request: { body: ArticlesBodySchema, bodyDoc: ArticlesBodyDoc },
    responses: {
      200: { description: 'The report: counts, then one entry per line (1-based) with its status, canonical URL and guid, or its cause', schema: ArticlesReportSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      401: errorResponses[401],
      403: NO_SITE_HOSTS,
      415: errorResponses[415],
      500: { description: 'A storage error a retry cannot cure (a bug; logged); the cause says how many articles were applied', schema: ErrorSchema },
      503: { description: 'Storage fault a retry can cure after part of the batch was applied; the cause says how many; retrying is safe', schema: ErrorSchema },
    },
    lambda: { timeoutSeconds: 29, memoryMb: 512 },
  },
  articlesGet: {
    method: 'GET',
    path: '/v1/articles',
    handler: 'functions/articles-get.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: 'Page through the catalogue, newest first',
    description:
      'Articles known from the catalogue (API and feed) and from tracking, by publication time, newest first. `category` keeps one category (exact, case-sensitive match). `count` defaults to ' + `${ARTICLES_PAGE.default}, at most ${ARTICLES_PAGE.max}. ` +
      'The response headers `X-Next-Cursor` and `Link: <…>; rel="next"` continue after the page (pass `cursor`); a filtered page may hold fewer than `count` articles and still have a next page.',
    tags: ['articles'],
    request: { query: ArticlesQuerySchema },
    responses: {
      200: { description: 'Articles, newest first', schema: v.array(ArticleOutputSchema), headers: ['x-next-cursor', 'link', 'cache-control'] },
      400: errorResponses[400],
      401: errorResponses[401],
    },
  },
  articlesDelete: {
    method: 'DELETE',
    path: '/v1/articles',
    handler: 'functions/articles-delete.ts',
    auth: 'token',
    access: { table: 'RW' },
    summary: 'Delete an article from the catalogue',
    description:
      '`url` is canonicalised as tracking does. The article is never recommended again, and its counters (views, clicks, popularity, co-visits) go with it. Later page views of it are accepted by tracking and not counted; `PUT /v1/articles` brings it back (as a new article).',
    tags: ['articles'],
    request: { query: ArticleDeleteQuerySchema },
    responses: {
      200: { description: 'Deleted', schema: ArticleDeletedSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'No such article in the catalogue (never known, or already deleted)', schema: ErrorSchema },
    },
  },
} as const satisfies Record<string, RouteDef>;
