/** Errors of double opt-in submissions (shared/http/error-table.ts maps them by `name`). */
export class OptinError extends Error {
  override name = 'OptinError';
}

/** A submission that cannot be taken: an unknown tracking or form key, bad lists, an unknown subscriber, an invalid line. */
export class InvalidSubmissionError extends OptinError {
  override name = 'InvalidSubmissionError';
  constructor(
    readonly field: 'tracking_key' | 'form_key' | 'email_lists' | 'email' | 'body',
    message: string,
  ) {
    super(message);
  }
}
