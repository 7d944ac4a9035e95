/**
 * Errors that become HTTP responses. `expose` follows middy's HttpError:
 * the message is shown to the caller only below 500.
 */
export class HttpError extends Error {
  readonly expose: boolean;
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.expose = status < 500;
  }

  /** The spec's error body (§7): `{status, cause}`. */
  body(): unknown {
    return { status: this.status, cause: this.message };
  }
}

export class BadRequestError extends HttpError {
  constructor(cause: string) {
    super(400, cause);
  }
}

export class UnauthorizedError extends HttpError {
  constructor(cause: string) {
    super(401, cause);
  }
}

export class ForbiddenError extends HttpError {
  constructor(cause: string) {
    super(403, cause);
  }
}

export class NotFoundError extends HttpError {
  constructor(cause: string) {
    super(404, cause);
  }
}

export class MethodNotAllowedError extends HttpError {
  constructor(cause: string, allow: string[]) {
    super(405, cause, { allow: allow.join(', ') });
  }
}

export class ConflictError extends HttpError {
  constructor(cause: string) {
    super(409, cause);
  }
}

export class PayloadTooLargeError extends HttpError {
  constructor(cause: string) {
    super(413, cause);
  }
}

export class UnsupportedMediaTypeError extends HttpError {
  constructor(cause: string) {
    super(415, cause);
  }
}

export class TooManyRequestsError extends HttpError {
  constructor(cause: string, retryAfterSeconds: number) {
    super(429, cause, { 'retry-after': String(retryAfterSeconds) });
  }
}

/** The deprecated list-less API's error body (§4.10): `{status: "INVALID_REQUEST", message}`. */
export class InvalidRequestError extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
  override body(): unknown {
    return { status: 'INVALID_REQUEST', message: this.message };
  }
}
