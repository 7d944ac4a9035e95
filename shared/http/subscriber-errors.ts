/**
 * The subscriber and import domains' errors as HTTP answers: one table, each
 * domain error class to its status, cause and headers. shared/http/handler.ts
 * consults it for any error that is not already an HttpError.
 */
import { LeaseLostError } from '../imports/errors.js';
import {
  EventsNotStoredError,
  InvalidSubscriberInputError,
  ListBusyError,
  ListLeaseLostError,
  PartialDeleteError,
  PartialWriteError,
  StorageBugError,
} from '../subscribers/errors.js';
import { HttpError } from './errors.js';

const retrySafe = 'Retry the request: applying it again is safe.';

type Mapping<E> = [new (...args: never[]) => E, (err: E) => HttpError];
const row = <E>(type: new (...args: never[]) => E, toHttp: (err: E) => HttpError): Mapping<unknown> => [type, toHttp as (err: unknown) => HttpError];

export const subscriberErrors: Array<Mapping<unknown>> = [
  row(ListBusyError, () => new HttpError(503, 'Another large write to this list is running; nothing of this request was applied. Retry in a few seconds.', { 'retry-after': '5' })),
  row(PartialWriteError, (e) => {
    const what = `${e.applied} of ${e.total} subscribers were applied; the rest were not.`;
    if (e.reason === 'time') return new HttpError(503, `The request ran out of time after ${what} ${retrySafe}`, { 'retry-after': '1' });
    if (e.reason === 'busy') return new HttpError(503, `Another large write to this list held it after ${what} ${retrySafe}`, { 'retry-after': '5' });
    return new HttpError(503, `Storage error after ${what} ${retrySafe}`, { 'retry-after': '1' });
  }),
  row(StorageBugError, (e) =>
    new HttpError(
      500,
      e.applied === 0
        ? 'Internal error; nothing was applied. It has been logged.'
        : `Internal error after ${e.applied} of ${e.total} subscribers were applied; the rest were not. It has been logged.`,
    ),
  ),
  row(
    EventsNotStoredError,
    (e) =>
      new HttpError(
        503,
        `${e.applied} subscribers were applied, but their ${e.events} events could not be stored (they were logged, addresses hashed); the subscriber state is complete`,
        { 'retry-after': '1' },
      ),
  ),
  row(PartialDeleteError, (e) => {
    const lists = e.lists.length > 0 ? ` (from list${e.lists.length > 1 ? 's' : ''} ${e.lists.join(', ')})` : '';
    const why = e.reason === 'busy' ? 'another large write held a list' : 'a storage error';
    return new HttpError(
      503,
      `${e.deleted} subscription(s) were deleted${lists} and ${e.addresses} address(es) were removed from every list before ${why}; the other addresses may still be on some lists. Retry the request: deleting again is safe.`,
      { 'retry-after': e.reason === 'busy' ? '5' : '1' },
    );
  }),
  row(ListLeaseLostError, () => new HttpError(503, 'The list writer stopped; nothing more was applied. Retry the request: applying it again is safe.', { 'retry-after': '5' })),
  row(LeaseLostError, () => new HttpError(409, 'Another worker holds this imported file')),
  row(InvalidSubscriberInputError, (e) => new HttpError(400, e.message)),
];

/** The HTTP answer of a domain error of the table, or undefined. */
export function subscriberHttpError(err: unknown): HttpError | undefined {
  const found = subscriberErrors.find(([type]) => err instanceof type);
  return found ? found[1](err) : undefined;
}
