import { describe, expect, it } from 'vitest';
import { BadCredentialsError, TokenError } from '../../shared/auth/errors.js';
import { ClientExistsError, InvalidClientSettingError, UnknownClientError } from '../../shared/clients/errors.js';
import { EventFilesNotEnabledError, InvalidEventRequestError } from '../../shared/events/errors.js';
import { domainErrors, errorRow, httpErrorOf } from '../../shared/http/error-table.js';
import { UnknownListError } from '../../shared/lists/errors.js';
import { UrlFetchError } from '../../shared/net/errors.js';
import { InvalidSubmissionError } from '../../shared/optin/errors.js';
import { RateLimitedError } from '../../shared/ratelimit/errors.js';

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

  it('an error no row knows stays unknown (a 500 for the responder), and another table merges by concatenation', () => {
    class OtherError extends Error {}
    expect(httpErrorOf(new Error('boom'))).toBeUndefined();
    expect(httpErrorOf(new OtherError('x'))).toBeUndefined();
    const merged = [...domainErrors, errorRow(OtherError, 503, () => 'busy', () => ({ 'retry-after': '5' }))];
    expect(httpErrorOf(new OtherError('x'), merged)?.body()).toEqual({ status: 503, cause: 'busy' });
    expect(httpErrorOf(new UnknownListError('acme', 1), merged)?.status).toBe(404);
  });
});
