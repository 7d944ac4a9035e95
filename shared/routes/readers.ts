/** Rows of the route table (shared/routes.ts): reader links (unsubscribe, preference centre) and a reader's data export. */
import type { HeaderName } from '../http/header-docs.js';
import type { RouteDef } from '../http/route.js';
import { ErrorSchema, errorResponses } from '../http/schemas.js';
import { READER_CHANGE_LIMITS, READER_PAGE_LIMITS } from '../ratelimit/policy.js';
import { ExportQuerySchema, ExportSchema, OneClickBodyDoc, PreferencesBodyDoc, PreferencesParamsSchema, UnsubscribeParamsSchema } from '../readers/schemas.js';

/** The headers of every reader page. */
const PAGE: HeaderName[] = ['cache-control', 'referrer-policy', 'x-robots-tag', 'content-security-policy'];
const HTML = 'text/html; charset=utf-8';
const limitText = (what: string, l: { perIpPerMinute: number; perLinkPerMinute: number }) =>
  `Rate limits of ${what}, per publisher: ${l.perIpPerMinute} per minute per source address (IPv6: per /64), then ${l.perLinkPerMinute} per minute per link (a link replayed from many addresses limits only itself); 429 with Retry-After beyond.`;
/** GETs (what mail scanners fetch) and POSTs (what readers and mailbox providers send) have separate budgets. */
const limits = limitText('the pages (GET), counted apart from the changes', READER_PAGE_LIMITS);
const changeLimits = limitText('the changes (POST: one-click, saved preferences), counted apart from the pages, so scanners cannot use them up', READER_CHANGE_LIMITS);
const pageResponses = (ok: string) => ({
  200: { description: ok, contentType: HTML, headers: PAGE },
  404: { description: 'Link not valid: tampered, made with a secret rotated out, or of an unknown publisher (HTML page); nothing changed', contentType: HTML, headers: PAGE },
  429: { description: 'Rate limit exceeded; Retry-After gives the seconds to wait', schema: ErrorSchema },
});

export const readerRoutes = {
  readerUnsubscribeGet: {
    method: 'GET',
    path: '/v1/readers/unsubscribe/{client_id}/{list_id}/{address}/{token}',
    handler: 'functions/reader-unsubscribe-get.ts',
    auth: 'key',
    access: { table: 'RW' },
    summary: "The unsubscribe link's page: the list, the address partly masked, one confirm button",
    description:
      'Changes nothing (mail scanners fetch links; HEAD is not routed and changes nothing either). The button posts `List-Unsubscribe=One-Click` to the same address. ' +
      'The token is HMAC-SHA256 under the client\'s link secret (docs/api.md, "Reader links"). A reader no longer on the list gets a neutral page. The page carries its publisher (the client\'s display name, logo, brand colour, postal address and privacy policy as set by support: docs/operations.md, "Branding"). ' +
      limits,
    tags: ['readers'],
    request: { params: UnsubscribeParamsSchema },
    responses: pageResponses('The page (also the neutral page of an address not on the list)'),
  },
  readerUnsubscribePost: {
    method: 'POST',
    path: '/v1/readers/unsubscribe/{client_id}/{list_id}/{address}/{token}',
    handler: 'functions/reader-unsubscribe-post.ts',
    auth: 'key',
    access: { table: 'RW', events: 'W' },
    summary: 'RFC 8058 one-click unsubscribe (and the page\'s button)',
    description:
      'Body `List-Unsubscribe=One-Click`, `application/x-www-form-urlencoded` or `multipart/form-data`. Unsubscribes the address from this list only (cause `READER`, one `nl_unsubscribe` event, a consent record with the source address and user agent) and answers 200 without a redirect; repeating it changes nothing. ' +
      'An address no longer on the list (deleted) stays absent. ' +
      changeLimits,
    tags: ['readers'],
    request: { params: UnsubscribeParamsSchema, bodyDoc: OneClickBodyDoc, bodyTypes: ['form'] },
    responses: {
      ...pageResponses('Unsubscribed (or already): the page says so'),
      400: { description: 'The body is not `List-Unsubscribe=One-Click` (HTML page), or a part of the link is too long to be one (JSON); nothing changed', contentType: HTML, headers: PAGE, alternatives: [{ contentType: 'application/json', schema: ErrorSchema }] },
      503: { description: 'A storage fault; retrying is safe', schema: ErrorSchema },
    },
  },
  readerPreferencesGet: {
    method: 'GET',
    path: '/v1/readers/preferences/{client_id}/{address}/{token}',
    handler: 'functions/reader-preferences-get.ts',
    auth: 'key',
    access: { table: 'RW' },
    summary: 'The preference centre: the lists of the publisher the reader is in (and those of its global opt-in forms), ticked as they stand',
    description: `Changes nothing. Works without JavaScript. A reader in no list gets a neutral page. The page carries its publisher (the client's display name, logo, brand colour, postal address and privacy policy as set by support: docs/operations.md, "Branding"). ${limits}`,
    tags: ['readers'],
    request: { params: PreferencesParamsSchema },
    responses: pageResponses('The page'),
  },
  readerPreferencesPost: {
    method: 'POST',
    path: '/v1/readers/preferences/{client_id}/{address}/{token}',
    handler: 'functions/reader-preferences-post.ts',
    auth: 'key',
    access: { table: 'RW', events: 'W' },
    summary: "Save the reader's choices in the preference centre",
    description:
      'Form fields `list` (repeated: the ticked list ids) and `action` (`save`, or `unsubscribe_all`). Unticked lists are unsubscribed (cause `READER`), ticked ones subscribed (again); only the lists the page shows can change. ' +
      changeLimits,
    tags: ['readers'],
    request: { params: PreferencesParamsSchema, bodyDoc: PreferencesBodyDoc, bodyTypes: ['form'] },
    responses: {
      ...pageResponses('Saved: the page with the lists as they now stand'),
      400: { description: 'Not a form body (HTML page), or a part of the link is too long to be one (JSON); nothing changed', contentType: HTML, headers: PAGE, alternatives: [{ contentType: 'application/json', schema: ErrorSchema }] },
      503: { description: 'A storage fault; retrying is safe', schema: ErrorSchema },
    },
  },
  usersExport: {
    method: 'GET',
    path: '/v1/users/export',
    handler: 'functions/users-export.ts',
    auth: 'token',
    access: { table: 'R' },
    summary: "A copy of a reader's data (GDPR access): memberships with consent records, pending opt-ins, recommendation data",
    description: "The caller's client only: an address of another client's reader answers 404. After users/delete, 404.",
    tags: ['subscribers'],
    request: { query: ExportQuerySchema },
    responses: {
      200: { description: 'The copy', schema: ExportSchema, headers: ['cache-control'] },
      400: errorResponses[400],
      401: errorResponses[401],
      404: { description: 'The client keeps nothing about this address', schema: ErrorSchema },
    },
  },
} as const satisfies Record<string, RouteDef>;
