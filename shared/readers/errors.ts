/** Errors of the readers domain (shared/http/error-table.ts maps them by `name`). */
export class ReadersError extends Error {
  override name = 'ReadersError';
}

/** The client keeps nothing about this address (the export). */
export class UnknownReaderError extends ReadersError {
  override name = 'UnknownReaderError';
  constructor(readonly email: string) {
    super(`No data is kept about ${email}`);
  }
}
