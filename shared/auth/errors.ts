/** Errors of authentication: tokens and API keys (shared/http/error-table.ts maps them by `name`). */
export class AuthError extends Error {
  override name = 'AuthError';
}

/** A request's token that is missing, unknown, expired or revoked (its API key replaced since). */
export class TokenError extends AuthError {
  override name = 'TokenError';
  constructor(
    readonly reason: 'missing' | 'unknown' | 'expired' | 'revoked',
    message: string,
  ) {
    super(message);
  }
}

/** A username and API key that do not match (an unknown username reads the same). */
export class BadCredentialsError extends AuthError {
  override name = 'BadCredentialsError';
  constructor(
    readonly username: string,
    message: string,
  ) {
    super(message);
  }
}
