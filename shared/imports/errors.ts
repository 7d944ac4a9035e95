/** Errors of the imports domain: what happened and its context, never an HTTP status (shared/http/error-table.ts maps them by `name`). */

/** Another worker took the file's lease: this one stops without saving. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

/** The client has no imported file with this id. */
export class UnknownFileError extends Error {
  override name = 'UnknownFileError';
  constructor(
    readonly clientId: string,
    readonly fileId: number,
  ) {
    super(`Unknown file ${fileId}`);
  }
}
