import { describe, expect, it } from 'vitest';
import { subscriberErrors, subscriberHttpError } from '../../shared/http/subscriber-errors.js';
import { LeaseLostError } from '../../shared/imports/errors.js';
import * as errors from '../../shared/subscribers/errors.js';

describe('the subscriber and import errors as HTTP answers (shared/http/subscriber-errors.ts)', () => {
  it('maps each domain error to its status, cause and Retry-After; the names survive minification (set explicitly)', () => {
    const cases: Array<[Error, number, string, string | undefined]> = [
      [new errors.ListBusyError('c', 1), 503, 'Another large write to this list is running; nothing of this request was applied. Retry in a few seconds.', '5'],
      [new errors.PartialWriteError(3, 10), 503, 'Storage error after 3 of 10 subscribers were applied; the rest were not. Retry the request: applying it again is safe.', '1'],
      [new errors.PartialWriteError(3, 10, 'time'), 503, 'The request ran out of time after 3 of 10 subscribers were applied; the rest were not. Retry the request: applying it again is safe.', '1'],
      [new errors.PartialWriteError(3, 10, 'busy'), 503, 'Another large write to this list held it after 3 of 10 subscribers were applied; the rest were not. Retry the request: applying it again is safe.', '5'],
      [new errors.StorageBugError(0, 10), 500, 'Internal error; nothing was applied. It has been logged.', undefined],
      [new errors.StorageBugError(4, 10), 500, 'Internal error after 4 of 10 subscribers were applied; the rest were not. It has been logged.', undefined],
      [new errors.EventsNotStoredError(2, 2), 503, '2 subscribers were applied, but their 2 events could not be stored (they were logged, addresses hashed); the subscriber state is complete', '1'],
      [new errors.InvalidSubscriberInputError('body: bad'), 400, 'body: bad', undefined],
      [new LeaseLostError('x'), 409, 'Another worker holds this imported file', undefined],
    ];
    for (const [err, status, cause, retryAfter] of cases) {
      const http = subscriberHttpError(err)!;
      expect(http.body()).toEqual({ status, cause });
      expect(http.headers['retry-after']).toBe(retryAfter);
    }
    expect(subscriberHttpError(new Error('other'))).toBeUndefined();
  });

  it('has a row for every error class of the subscriber domain', () => {
    const names = new Set(subscriberErrors.map(([name]) => name));
    const classes = Object.values(errors).filter((c): c is typeof errors.SubscriberError => typeof c === 'function' && c !== errors.SubscriberError);
    for (const cls of classes) expect(names.has((Object.create(cls.prototype) as Error).name ?? cls.name) || names.has(cls.name)).toBe(true);
  });
});
