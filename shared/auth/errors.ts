/** Errors of authentication: tokens and API keys (shared/http/error-table.ts gives their status). */
export class AuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A request's token that is missing, unknown, expired or revoked (its API key replaced since). */
export class TokenError extends AuthError {
  constructor(
    readonly reason: 'missing' | 'unknown' | 'expired' | 'revoked',
    message: string,
  ) {
    super(message);
  }
}

/** A username and API key that do not match (an unknown username reads the same). */
export class BadCredentialsError extends AuthError {
  constructor(
    readonly username: string,
    message: string,
  ) {
    super(message);
  }
}
