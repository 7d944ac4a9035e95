/**
 * Errors of the subscriber domain. Each carries what happened and its
 * context, never an HTTP status: shared/http/error-table.ts maps them (by `name`) to
 * a status and a cause at the edge.
 */

/** Base of the subscriber domain's errors. */
export class SubscriberError extends Error {
  override name = 'SubscriberError';
}

/** Why a write stopped part-way. */
export type StopReason = 'storage' | 'time';

/**
 * A write stopped after part of its lines were applied (`applied` of
 * `total`; counters and events match exactly those). Re-sending the whole
 * write is safe.
 */
export class PartialWriteError extends SubscriberError {
  override name = 'PartialWriteError';
  constructor(
    readonly applied: number,
    readonly total: number,
    readonly reason: StopReason = 'storage',
    options?: ErrorOptions,
  ) {
    super(`${reason} stop after ${applied} of ${total} subscribers were applied`, options);
  }
}

/** A storage error a retry cannot cure (a bug of the service), after `applied` of `total` lines. */
export class StorageBugError extends SubscriberError {
  override name = 'StorageBugError';
  constructor(
    readonly applied: number,
    readonly total: number,
    options?: ErrorOptions,
  ) {
    super(`storage bug after ${applied} of ${total} subscribers were applied`, options);
  }
}

/** A deletion stopped part-way: `deleted` subscriptions (of `addresses` addresses) were removed before `cause`. */
export class PartialDeleteError extends SubscriberError {
  override name = 'PartialDeleteError';
  constructor(
    readonly deleted: number,
    readonly addresses: number,
    readonly lists: number[],
    readonly reason: StopReason,
    options?: ErrorOptions,
  ) {
    super(`deletion stopped after ${deleted} subscriptions`, options);
  }
}

/** Input the subscriber rules refuse as a whole (the `cause` names the field and the problem). */
export class InvalidSubscriberInputError extends SubscriberError {
  override name = 'InvalidSubscriberInputError';
}

/** A batch of the deprecated list-less API refused as a whole; the message counts and names the bad lines (`2 error(s): …`). */
export class InvalidLegacyBatchError extends SubscriberError {
  override name = 'InvalidLegacyBatchError';
}
