/** Errors of outbound fetches (shared/http/error-table.ts maps them by `name`). */

/**
 * A URL that may not or could not be fetched; its message starts with
 * `url:`. `detail` (what was resolved, connected, answered) is for the log
 * only: the message must not map the network for the caller.
 */
export class UrlFetchError extends Error {
  override name = 'UrlFetchError';
  constructor(
    cause: string,
    readonly detail?: string,
  ) {
    super(`url: ${cause}`);
  }
}
