/** Errors of outbound fetches (shared/http/error-table.ts gives their status). */

/**
 * A URL that may not or could not be fetched; its message starts with
 * `url:`. `detail` (what was resolved, connected, answered) is for the log
 * only: the message must not map the network for the caller.
 */
export class UrlFetchError extends Error {
  constructor(
    cause: string,
    readonly detail?: string,
  ) {
    super(`url: ${cause}`);
    this.name = new.target.name;
  }
}
