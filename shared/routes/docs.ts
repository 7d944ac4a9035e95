/** Rows of the route table (shared/routes.ts): the API description and its reference page. */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';

export const docRoutes = {
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
} as const satisfies Record<string, RouteDef>;
