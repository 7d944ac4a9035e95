/**
 * The one table from domain errors to HTTP: status, cause and headers of the
 * spec's `{status, cause}` body. Domain modules throw their own errors
 * (shared/<domain>/errors.ts) and know nothing of HTTP; the error responder
 * (handler.ts) turns the first row whose class matches into an HttpError.
 * Rows of subclasses come before their base class. Another table (say,
 * subscriber-errors.ts) merges by concatenation: `[...domainErrors, ...other]`.
 * Only errors.ts modules are imported here: they have no dependencies, so no
 * route bundle grows by a domain it does not use.
 */
import { AuthError } from '../auth/errors.js';
import { ClientExistsError, InvalidClientSettingError, UnknownClientError } from '../clients/errors.js';
import { EventFilesNotEnabledError, InvalidEventRequestError } from '../events/errors.js';
import { UnknownListError } from '../lists/errors.js';
import { UrlFetchError } from '../net/errors.js';
import { InvalidSubmissionError } from '../optin/errors.js';
import { RateLimitedError } from '../ratelimit/errors.js';
import { HttpError } from './errors.js';

type ErrorClass<E extends Error> = abstract new (...args: never[]) => E;

/** One row: the error class, its status, its cause (by default the error's message) and response headers. */
export type ErrorRow = readonly [type: ErrorClass<Error>, status: number, cause: (err: Error) => string, headers?: (err: Error) => Record<string, string>];

/** A row, typed by its class: `cause` and `headers` see the class's own fields. */
export function errorRow<E extends Error>(type: ErrorClass<E>, status: number, cause: (err: E) => string = (err) => err.message, headers?: (err: E) => Record<string, string>): ErrorRow {
  return [type, status, cause as (err: Error) => string, headers as ((err: Error) => Record<string, string>) | undefined];
}

export const domainErrors: readonly ErrorRow[] = [
  errorRow(AuthError, 401),
  errorRow(UnknownClientError, 404),
  errorRow(ClientExistsError, 409),
  errorRow(InvalidClientSettingError, 400),
  errorRow(UnknownListError, 404),
  errorRow(InvalidEventRequestError, 400),
  errorRow(EventFilesNotEnabledError, 403),
  errorRow(InvalidSubmissionError, 400),
  errorRow(RateLimitedError, 429, undefined, (err) => ({ 'retry-after': String(err.retryAfterSeconds) })),
  errorRow(UrlFetchError, 400),
];

/** The HTTP error of a domain error (the first matching row), or undefined when no row matches. */
export function httpErrorOf(err: unknown, rows: readonly ErrorRow[] = domainErrors): HttpError | undefined {
  for (const [type, status, cause, headers] of rows) if (err instanceof type) return new HttpError(status, cause(err), headers?.(err));
}
