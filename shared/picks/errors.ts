/** Errors of newsletter picks: what happened, never an HTTP status (shared/http/error-table.ts maps them by `name`). */

/** The client has no newsletter-picks job with this id (or it expired). */
export class UnknownPicksJobError extends Error {
  override name = 'UnknownPicksJobError';
  constructor(readonly jobId: string) {
    super(`Unknown newsletter-picks job ${jobId}`);
  }
}
