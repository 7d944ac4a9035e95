/** Errors of rate limits (shared/http/error-table.ts gives their status). */
export class RateLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A window's allowance is spent for this scope (an IP address, a form key, logins); it opens again after `retryAfterSeconds`. */
export class RateLimitedError extends RateLimitError {
  constructor(
    readonly scope: 'ip' | 'key' | 'login',
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
  }
}
