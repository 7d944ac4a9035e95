/** Errors of rate limits (shared/http/error-table.ts maps them by `name`). */
export class RateLimitError extends Error {
  override name = 'RateLimitError';
}

/** A window's allowance is spent for this scope (an IP address, a form key, logins); it opens again after `retryAfterSeconds`. */
export class RateLimitedError extends RateLimitError {
  override name = 'RateLimitedError';
  constructor(
    readonly scope: 'ip' | 'key' | 'login' | 'picks',
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
  }
}
