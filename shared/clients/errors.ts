/** Errors of clients and their settings (shared/http/error-table.ts gives their status). */
export class ClientsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** No client has this id. */
export class UnknownClientError extends ClientsError {
  constructor(readonly clientId: string) {
    super(`Unknown client ${clientId}`);
  }
}

/** A client with this username exists already. */
export class ClientExistsError extends ClientsError {
  constructor(readonly username: string) {
    super(`Client ${username} already exists`);
  }
}

/** A client setting (username, site hosts, a form's lists) that cannot be stored; the message names the field. */
export class InvalidClientSettingError extends ClientsError {
  constructor(
    readonly field: 'username' | 'hosts' | 'listIds',
    message: string,
  ) {
    super(message);
  }
}
