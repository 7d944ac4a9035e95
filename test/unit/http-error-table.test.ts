import { describe, expect, it } from 'vitest';
import * as auth from '../../shared/auth/errors.js';
import { BadCredentialsError, TokenError } from '../../shared/auth/errors.js';
import * as clients from '../../shared/clients/errors.js';
import { ClientExistsError, InvalidClientSettingError, UnknownClientError } from '../../shared/clients/errors.js';
import * as events from '../../shared/events/errors.js';
import { EventFilesNotEnabledError, InvalidEventRequestError } from '../../shared/events/errors.js';
import { answer, errorTable, httpErrorOf } from '../../shared/http/error-table.js';
import { InvalidRequestError } from '../../shared/http/errors.js';
import * as imports from '../../shared/imports/errors.js';
import { LeaseLostError, UnknownFileError } from '../../shared/imports/errors.js';
import * as lists from '../../shared/lists/errors.js';
import { UnknownListError } from '../../shared/lists/errors.js';
import * as net from '../../shared/net/errors.js';
import { UrlFetchError } from '../../shared/net/errors.js';
import * as optin from '../../shared/optin/errors.js';
import { InvalidSubmissionError } from '../../shared/optin/errors.js';
import * as ratelimit from '../../shared/ratelimit/errors.js';
import { RateLimitedError } from '../../shared/ratelimit/errors.js';
import * as recos from '../../shared/recos/errors.js';
import * as errors from '../../shared/subscribers/errors.js';
import * as webhooks from '../../shared/webhooks/errors.js';

describe('the domain error table (shared/http/error-table.ts)', () => {
  it.each([
    [new TokenError('expired', 'Token expired'), 401, 'Token expired'],
    [new BadCredentialsError('acme', 'Invalid username or password'), 401, 'Invalid username or password'],
    [new UnknownClientError('acme'), 404, 'Unknown client acme'],
    [new ClientExistsError('acme'), 409, 'Client acme already exists'],
    [new InvalidClientSettingError('hosts', 'hosts: at most 50 entries'), 400, 'hosts: at most 50 entries'],
    [new UnknownListError('acme', 7), 404, 'Unknown list 7'],
    [new InvalidEventRequestError('date', 'date must be a day'), 400, 'date must be a day'],
    [new EventFilesNotEnabledError('acme'), 403, 'Event files are a premium feature, not enabled for this client; ask support to enable it'],
    [new InvalidSubmissionError('form_key', 'body.form_key: unknown'), 400, 'body.form_key: unknown'],
    [new UrlFetchError('the file could not be fetched', 'ECONNREFUSED'), 400, 'url: the file could not be fetched'],
    [new UnknownFileError('acme', 12), 404, 'Unknown file 12'],
    [new recos.UnknownBlockKeyError('bk'), 404, 'Unknown block key'],
    [new recos.UnknownTrackingKeyError('tk'), 404, 'Unknown tracking key'],
    [new recos.UnknownArticleError('g1'), 404, 'Unknown article'],
    [new recos.UnknownArticleError('https://x.example/a', 'Unknown article https://x.example/a'), 404, 'Unknown article https://x.example/a'],
    [new recos.InvalidRecosRequestError('query: not validly URL-encoded'), 400, 'query: not validly URL-encoded'],
    [new recos.NoSiteHostsError('body.url: the client has no site hosts yet'), 403, 'body.url: the client has no site hosts yet'],
    [new recos.TrackingRefusedError('y.example', "body.url: host y.example is not one of the client's site hosts"), 403, "body.url: host y.example is not one of the client's site hosts"],
    [new recos.ReaderSignatureError('query.sig', 'query.sig: not the signature of this reader id'), 403, 'query.sig: not the signature of this reader id'],
  ])('%s: its status and the spec body {status, cause}', (err, status, cause) => {
    // Act
    const http = httpErrorOf(err);
    // Assess
    expect(http?.status).toBe(status);
    expect(http?.body()).toEqual({ status, cause });
  });

  it('a rate limit is a 429 with Retry-After', () => {
    const http = httpErrorOf(new RateLimitedError('ip', 12, 'Too many requests; retry in 12 s'));
    expect([http?.status, http?.headers]).toEqual([429, { 'retry-after': '12' }]);
  });

  it('maps each subscriber, import and catalogue write error to its status, cause and Retry-After; the names survive minification (set explicitly)', () => {
    const cases: Array<[Error, number, string, string | undefined]> = [
      [new errors.PartialWriteError(3, 10), 503, 'Storage error after 3 of 10 subscribers were applied; the rest were not. Retry the request: applying it again is safe.', '1'],
      [new errors.PartialWriteError(3, 10, 'time'), 503, 'The request ran out of time after 3 of 10 subscribers were applied; the rest were not. Retry the request: applying it again is safe.', '1'],
      [new errors.StorageBugError(0, 10), 500, 'Internal error; nothing was applied. It has been logged.', undefined],
      [new errors.StorageBugError(4, 10), 500, 'Internal error after 4 of 10 subscribers were applied; the rest were not. It has been logged.', undefined],
      [new errors.PartialDeleteError(2, 1, [3, 4], 'time'), 503, '2 subscription(s) were deleted (from lists 3, 4) and 1 address(es) were removed from every list before the request ran out of time; the other addresses may still be on some lists. Retry the request: deleting again is safe.', '1'],
      [new errors.PartialDeleteError(0, 0, [], 'storage'), 503, '0 subscription(s) were deleted and 0 address(es) were removed from every list before a storage error; the other addresses may still be on some lists. Retry the request: deleting again is safe.', '1'],
      [new errors.InvalidSubscriberInputError('body: bad'), 400, 'body: bad', undefined],
      [new LeaseLostError('x'), 409, 'Another worker holds this imported file', undefined],
      [new recos.PartialCatalogueWriteError(3, 10, true), 503, 'Storage error after 3 of 10 articles were applied; the rest were not. Retry the request: applying it again is safe.', '1'],
      [new recos.PartialCatalogueWriteError(3, 10, false), 500, 'Internal error after 3 of 10 articles were applied; the rest were not. It has been logged.', undefined],
    ];
    for (const [err, status, cause, retryAfter] of cases) {
      const http = httpErrorOf(err)!;
      expect(http.body()).toEqual({ status, cause });
      expect(http.headers['retry-after']).toBe(retryAfter);
    }
    expect(httpErrorOf(new Error('other'))).toBeUndefined();
  });

  it("the deprecated API's refusals keep its body {status: 'INVALID_REQUEST', message}", () => {
    const http = httpErrorOf(new errors.InvalidLegacyBatchError('1 error(s): the array is empty'));
    expect(http).toBeInstanceOf(InvalidRequestError);
    expect([http?.status, http?.body()]).toEqual([400, { status: 'INVALID_REQUEST', message: '1 error(s): the array is empty' }]);
  });

  it('an error no row knows stays unknown (a 500 for the responder), and a table with another row keeps the others', () => {
    class OtherError extends Error {}
    expect(httpErrorOf(new Error('boom'))).toBeUndefined();
    expect(httpErrorOf(new OtherError('x'))).toBeUndefined();
    expect(httpErrorOf(Object.assign(new Error('x'), { name: 'toString' }))).toBeUndefined();
    const merged = { ...errorTable, Error: answer(503, () => 'busy', () => ({ 'retry-after': '5' })) };
    expect(httpErrorOf(new OtherError('x'), merged)?.body()).toEqual({ status: 503, cause: 'busy' });
    expect(httpErrorOf(new UnknownListError('acme', 1), merged)?.status).toBe(404);
  });

  it('has a row for every error class of every domain, and each sets its name (minified bundles rename classes)', () => {
    const modules = { auth, clients, events, imports, lists, net, optin, ratelimit, recos, subscribers: errors, webhooks };
    for (const [domain, mod] of Object.entries(modules)) {
      const classes = Object.values(mod).filter((c: unknown): c is new () => Error => typeof c === 'function' && (c as { prototype: unknown }).prototype instanceof Error);
      // A base class (extended by others of its domain) is never thrown itself.
      const leaves = classes.filter((c) => !classes.some((other) => other.prototype instanceof c));
      expect(leaves.length, domain).toBeGreaterThan(0);
      for (const cls of leaves) {
        const name = new cls().name;
        expect(name, `${domain}: ${cls.name}`).toBe(cls.name);
        expect(Object.hasOwn(errorTable, name), `${domain}: ${cls.name} has a row`).toBe(true);
      }
    }
  });
});
