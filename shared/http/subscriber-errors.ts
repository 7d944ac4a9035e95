/**
 * The subscriber and import domains' errors as HTTP answers: one table, each
 * domain error (by its class name: the table imports only their types, so a
 * function that never throws them does not bundle them) to its status, cause
 * and headers. shared/http/handler.ts consults it for any error.
 */
import type { LeaseLostError } from '../imports/errors.js';
import type {
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

type Mapping = [name: string, toHttp: (err: never) => HttpError];
const row = <E>(name: string, toHttp: (err: E) => HttpError): Mapping => [name, toHttp];

export const subscriberErrors: Mapping[] = [
  row<ListBusyError>('ListBusyError', () => new HttpError(503, 'Another large write to this list is running; nothing of this request was applied. Retry in a few seconds.', { 'retry-after': '5' })),
  row<PartialWriteError>('PartialWriteError', (e) => {
    const what = `${e.applied} of ${e.total} subscribers were applied; the rest were not.`;
    if (e.reason === 'time') return new HttpError(503, `The request ran out of time after ${what} ${retrySafe}`, { 'retry-after': '1' });
    if (e.reason === 'busy') return new HttpError(503, `Another large write to this list held it after ${what} ${retrySafe}`, { 'retry-after': '5' });
    return new HttpError(503, `Storage error after ${what} ${retrySafe}`, { 'retry-after': '1' });
  }),
  row<StorageBugError>('StorageBugError', (e) =>
    new HttpError(
      500,
      e.applied === 0
        ? 'Internal error; nothing was applied. It has been logged.'
        : `Internal error after ${e.applied} of ${e.total} subscribers were applied; the rest were not. It has been logged.`,
    ),
  ),
  row<EventsNotStoredError>(
    'EventsNotStoredError',
    (e) =>
      new HttpError(
        503,
        `${e.applied} subscribers were applied, but their ${e.events} events could not be stored (they were logged, addresses hashed); the subscriber state is complete`,
        { 'retry-after': '1' },
      ),
  ),
  row<PartialDeleteError>('PartialDeleteError', (e) => {
    const lists = e.lists.length > 0 ? ` (from list${e.lists.length > 1 ? 's' : ''} ${e.lists.join(', ')})` : '';
    const why = e.reason === 'busy' ? 'another large write held a list' : 'a storage error';
    return new HttpError(
      503,
      `${e.deleted} subscription(s) were deleted${lists} and ${e.addresses} address(es) were removed from every list before ${why}; the other addresses may still be on some lists. Retry the request: deleting again is safe.`,
      { 'retry-after': e.reason === 'busy' ? '5' : '1' },
    );
  }),
  row<ListLeaseLostError>('ListLeaseLostError', () => new HttpError(503, 'The list writer stopped; nothing more was applied. Retry the request: applying it again is safe.', { 'retry-after': '5' })),
  row<LeaseLostError>('LeaseLostError', () => new HttpError(409, 'Another worker holds this imported file')),
  row<InvalidSubscriberInputError>('InvalidSubscriberInputError', (e) => new HttpError(400, e.message)),
];

/** The HTTP answer of a domain error of the table, or undefined. */
export function subscriberHttpError(err: unknown): HttpError | undefined {
  if (!(err instanceof Error) || err instanceof HttpError) return undefined;
  const found = subscriberErrors.find(([name]) => err.name === name);
  return found ? found[1](err as never) : undefined;
}
