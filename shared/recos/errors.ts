/**
 * Errors of recommendations, tracking and the article catalogue: what
 * happened and its context, never an HTTP status (shared/http/error-table.ts
 * maps them by `name`). Messages name the field (`body.url: …`) where one is
 * at fault.
 */

/** Base of the recos domain's errors. */
export class RecosError extends Error {
  override name = 'RecosError';
}

/** No block has this public key. */
export class UnknownBlockKeyError extends RecosError {
  override name = 'UnknownBlockKeyError';
  constructor(readonly blockKey: string) {
    super('Unknown block key');
  }
}

/** A block setting that cannot be stored (`PUT /v1/blocks/{block_key}`, `admin create-block`); the message names the field. */
export class InvalidBlockSettingsError extends RecosError {
  override name = 'InvalidBlockSettingsError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** No client has this public tracking key. */
export class UnknownTrackingKeyError extends RecosError {
  override name = 'UnknownTrackingKeyError';
  constructor(readonly trackingKey: string) {
    super('Unknown tracking key');
  }
}

/** No article of the client (or none a block may lead to) has this guid or URL. */
export class UnknownArticleError extends RecosError {
  override name = 'UnknownArticleError';
  constructor(
    readonly article: string,
    message = 'Unknown article',
  ) {
    super(message);
  }
}

/** A request the recos rules refuse (a malformed query, a cursor of another catalogue, a page tracking another site); the message names the field. */
export class InvalidRecosRequestError extends RecosError {
  override name = 'InvalidRecosRequestError';
}

/** The client has no site hosts yet, so tracking and the catalogue are off (support sets them). */
export class NoSiteHostsError extends RecosError {
  override name = 'NoSiteHostsError';
}

/** A page view of a URL outside the client's site hosts: tracking refuses it. */
export class TrackingRefusedError extends RecosError {
  override name = 'TrackingRefusedError';
  constructor(
    readonly host: string,
    message: string,
  ) {
    super(message);
  }
}

/** A reader id the client requires to be signed came without its signature, or with a wrong one; `where` names the parameter. */
export class ReaderSignatureError extends RecosError {
  override name = 'ReaderSignatureError';
  constructor(
    readonly where: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A catalogue write stopped after `applied` of `total` articles; `retryable`
 * when a retry can cure the storage fault. The message is the caller's cause
 * (the feed job fails with it too).
 */
export class PartialCatalogueWriteError extends RecosError {
  override name = 'PartialCatalogueWriteError';
  constructor(
    readonly applied: number,
    readonly total: number,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    const what = `after ${applied} of ${total} articles were applied; the rest were not.`;
    super(retryable ? `Storage error ${what} Retry the request: applying it again is safe.` : `Internal error ${what} It has been logged.`, options);
  }
}

/** A page view's article update not started: its batch ran out of time (the view is delivered again, nothing of it applied). */
export class BatchDeadlineError extends RecosError {
  override name = 'BatchDeadlineError';
  constructor() {
    super('not started: the page-view batch ran out of time');
  }
}
