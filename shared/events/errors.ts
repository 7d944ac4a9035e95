/** Errors of event files and their jobs (shared/http/error-table.ts maps them by `name`). */
export class EventsError extends Error {
  override name = 'EventsError';
}

/** A day or an instant that a download or an assembly run cannot take (malformed, in the future); the message names it. */
export class InvalidEventRequestError extends EventsError {
  override name = 'InvalidEventRequestError';
  constructor(
    readonly field: 'date' | 'time',
    message: string,
  ) {
    super(message);
  }
}

/** Event files are a premium feature, not enabled for this client. */
export class EventFilesNotEnabledError extends EventsError {
  override name = 'EventFilesNotEnabledError';
  constructor(readonly clientId: string) {
    super('Event files are a premium feature, not enabled for this client; ask support to enable it');
  }
}
