/** Errors of clients and their settings (shared/http/error-table.ts maps them by `name`). */
export class ClientsError extends Error {
  override name = 'ClientsError';
}

/** No client has this id. */
export class UnknownClientError extends ClientsError {
  override name = 'UnknownClientError';
  constructor(readonly clientId: string) {
    super(`Unknown client ${clientId}`);
  }
}

/** A client with this username exists already. */
export class ClientExistsError extends ClientsError {
  override name = 'ClientExistsError';
  constructor(readonly username: string) {
    super(`Client ${username} already exists`);
  }
}

/** A client setting (username, site hosts, a form's lists, branding) that cannot be stored; the message names the field. */
export class InvalidClientSettingError extends ClientsError {
  override name = 'InvalidClientSettingError';
  constructor(
    readonly field: 'username' | 'hosts' | 'listIds' | 'branding',
    message: string,
  ) {
    super(message);
  }
}
