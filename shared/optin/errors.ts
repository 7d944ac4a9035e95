/** Errors of double opt-in submissions (shared/http/error-table.ts gives their status). */
export class OptinError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A submission that cannot be taken: an unknown tracking or form key, bad lists, an unknown subscriber, an invalid line. */
export class InvalidSubmissionError extends OptinError {
  constructor(
    readonly field: 'tracking_key' | 'form_key' | 'email_lists' | 'email' | 'body',
    message: string,
  ) {
    super(message);
  }
}
