/** Rows of the route table (shared/routes.ts): the caller's recommendation blocks and their settings (shared/recos/block-settings.ts). */
import * as v from 'valibot';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { BlockKeyParamsSchema, BlockSchema, BlockSettingsBodyDoc, BlockSettingsBodySchema } from '../recos/block-schemas.js';
import { BLOCK_KEY_CACHE_SECONDS } from '../recos/read-cache.js';

const notFound = { description: 'The caller has no block with this key (another client\'s block included)', schema: ErrorSchema };

export const blockRoutes = {
  blocksList: {
    method: 'GET',
    path: '/v1/blocks',
    handler: 'functions/blocks-list.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "The caller's recommendation blocks with their settings (defaults applied), oldest first",
    tags: ['recommendations'],
    responses: { 200: { description: 'The blocks', schema: v.array(BlockSchema) }, 401: errorResponses[401] },
  },
  blocksGet: {
    method: 'GET',
    path: '/v1/blocks/{block_key}',
    handler: 'functions/blocks-get.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: 'One of the caller’s blocks with its settings (defaults applied)',
    tags: ['recommendations'],
    request: { params: BlockKeyParamsSchema },
    responses: { 200: { description: 'The block', schema: BlockSchema }, 400: errorResponses[400], 401: errorResponses[401], 404: notFound },
  },
  blocksPut: {
    method: 'PUT',
    path: '/v1/blocks/{block_key}',
    handler: 'functions/blocks-put.ts',
    auth: 'token',
    access: { table: 'RW' },
    summary: 'Change a block’s settings (a JSON merge of the given top-level settings)',
    description: `Each given top-level setting replaces the block's; \`null\` resets it to its default; settings left out stay. Validated as a whole before anything is written (400 naming the first bad field, e.g. \`body.pins[0].url: host x.example is not one of the client's site hosts\`). Warm recommendation containers apply the change within ${BLOCK_KEY_CACHE_SECONDS} s. docs/api.md "Block settings" and "Editorial rules".`,
    tags: ['recommendations'],
    request: { params: BlockKeyParamsSchema, body: BlockSettingsBodySchema, bodyDoc: BlockSettingsBodyDoc },
    responses: {
      200: { description: 'The block as it now is', schema: BlockSchema },
      400: { description: 'A setting that cannot be stored (`cause` names it: `body.<setting>…: <rule>`)', schema: ErrorSchema },
      401: errorResponses[401],
      404: notFound,
      415: errorResponses[415],
    },
  },
} as const satisfies Record<string, RouteDef>;
