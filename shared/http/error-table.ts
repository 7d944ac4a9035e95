/**
 * The one table from domain errors (by `name`) to HTTP status, cause and headers, used by the error responder
 * (handler.ts). Names, not classes, and type-only imports: a function bundles no error class it never throws; each
 * error sets its `name` as a literal (minifiers rename classes), and a unit test checks every one has its row.
 */
import type { BadCredentialsError, TokenError } from '../auth/errors.js';
import type { ClientExistsError, InvalidClientSettingError, UnknownClientError } from '../clients/errors.js';
import type { EventFilesNotEnabledError, InvalidEventRequestError } from '../events/errors.js';
import type { LeaseLostError, UnknownFileError } from '../imports/errors.js';
import type { UnknownListError } from '../lists/errors.js';
import type { UrlFetchError } from '../net/errors.js';
import type { InvalidSubmissionError } from '../optin/errors.js';
import type { RateLimitedError } from '../ratelimit/errors.js';
import type { UnknownWebhookError, WebhookLimitError } from '../webhooks/errors.js';
import type { UnknownReaderError } from '../readers/errors.js';
import type { UnknownPicksJobError } from '../picks/errors.js';
import type {
  BatchDeadlineError,
  InvalidBlockSettingsError,
  InvalidRecosRequestError,
  NoSiteHostsError,
  PartialCatalogueWriteError,
  ReaderSignatureError,
  TrackingRefusedError,
  UnknownArticleError,
  UnknownBlockKeyError,
  UnknownTrackingKeyError,
} from '../recos/errors.js';
import type { InvalidLegacyBatchError, InvalidSubscriberInputError, PartialDeleteError, PartialWriteError, StorageBugError } from '../subscribers/errors.js';
import { HttpError, InvalidRequestError } from './errors.js';

/** The HTTP answer to one domain error. */
export type Answer<E extends Error = never> = (err: E) => HttpError;

/** An answer with this status, the error's message as its cause (or `cause(err)`) and response headers. */
export function answer<E extends Error>(status: number, cause: (err: E) => string = (err) => err.message, headers?: (err: E) => Record<string, string>): Answer<E> {
  return (err) => new HttpError(status, cause(err), headers?.(err));
}

const retrySafe = 'Retry the request: applying it again is safe.';
const logged = 'It has been logged.';
/** What a write that stopped part-way applied: `after 3 of 10 subscribers were applied; the rest were not.` */
const stoppedAfter = (e: { applied: number; total: number }, what: string) => `after ${e.applied} of ${e.total} ${what} were applied; the rest were not.`;
const faultRetry = () => ({ 'retry-after': '1' });

/** Domain error name → its HTTP answer. */
export const errorTable: Readonly<Record<string, Answer>> = {
  // auth
  TokenError: answer<TokenError>(401),
  BadCredentialsError: answer<BadCredentialsError>(401),
  // clients
  UnknownClientError: answer<UnknownClientError>(404),
  ClientExistsError: answer<ClientExistsError>(409),
  InvalidClientSettingError: answer<InvalidClientSettingError>(400),
  // lists
  UnknownListError: answer<UnknownListError>(404),
  // events
  InvalidEventRequestError: answer<InvalidEventRequestError>(400),
  EventFilesNotEnabledError: answer<EventFilesNotEnabledError>(403),
  // optin
  InvalidSubmissionError: answer<InvalidSubmissionError>(400),
  // ratelimit
  RateLimitedError: answer<RateLimitedError>(429, undefined, (err) => ({ 'retry-after': String(err.retryAfterSeconds) })),
  // net
  UrlFetchError: answer<UrlFetchError>(400),
  // subscribers
  PartialWriteError: (e: PartialWriteError) => {
    const what = `${stoppedAfter(e, 'subscribers')} ${retrySafe}`;
    if (e.reason === 'time') return new HttpError(503, `The request ran out of time ${what}`, faultRetry());
    return new HttpError(503, `Storage error ${what}`, faultRetry());
  },
  StorageBugError: answer<StorageBugError>(500, (e) => (e.applied === 0 ? `Internal error; nothing was applied. ${logged}` : `Internal error ${stoppedAfter(e, 'subscribers')} ${logged}`)),
  PartialDeleteError: (e: PartialDeleteError) => {
    const lists = e.lists.length > 0 ? ` (from list${e.lists.length > 1 ? 's' : ''} ${e.lists.join(', ')})` : '';
    const why = e.reason === 'time' ? 'the request ran out of time' : 'a storage error';
    return new HttpError(
      503,
      `${e.deleted} subscription(s) were deleted${lists} and ${e.addresses} address(es) were removed from every list before ${why}; the other addresses may still be on some lists. Retry the request: deleting again is safe.`,
      faultRetry(),
    );
  },
  InvalidSubscriberInputError: answer<InvalidSubscriberInputError>(400),
  // The deprecated list-less API's body: {status: "INVALID_REQUEST", message}.
  InvalidLegacyBatchError: (e: InvalidLegacyBatchError) => new InvalidRequestError(e.message),
  // imports
  LeaseLostError: answer<LeaseLostError>(409, () => 'Another worker holds this imported file'),
  UnknownFileError: answer<UnknownFileError>(404),
  // picks
  UnknownPicksJobError: answer<UnknownPicksJobError>(404),
  // recos
  UnknownBlockKeyError: answer<UnknownBlockKeyError>(404),
  UnknownTrackingKeyError: answer<UnknownTrackingKeyError>(404),
  UnknownArticleError: answer<UnknownArticleError>(404),
  InvalidRecosRequestError: answer<InvalidRecosRequestError>(400),
  InvalidBlockSettingsError: answer<InvalidBlockSettingsError>(400),
  NoSiteHostsError: answer<NoSiteHostsError>(403),
  TrackingRefusedError: answer<TrackingRefusedError>(403),
  ReaderSignatureError: answer<ReaderSignatureError>(403),
  PartialCatalogueWriteError: (e: PartialCatalogueWriteError) => (e.retryable ? new HttpError(503, e.message, faultRetry()) : new HttpError(500, e.message)),
  // The page-view consumer's (a job): no route throws it; were one to, a retry is safe.
  BatchDeadlineError: answer<BatchDeadlineError>(503, undefined, faultRetry),
  // webhooks
  UnknownWebhookError: answer<UnknownWebhookError>(404),
  WebhookLimitError: answer<WebhookLimitError>(409),
  // readers
  UnknownReaderError: answer<UnknownReaderError>(404),
};

/** The HTTP answer to a domain error (by its `name`), or undefined for any other error (the responder makes it a 500). */
export function httpErrorOf(err: unknown, table: Readonly<Record<string, Answer>> = errorTable): HttpError | undefined {
  if (!(err instanceof Error) || err instanceof HttpError || !Object.hasOwn(table, err.name)) return undefined;
  return table[err.name](err as never);
}
