/** Errors of lists (shared/http/error-table.ts gives their status). */
export class ListsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The client has no list with this id. */
export class UnknownListError extends ListsError {
  constructor(
    readonly clientId: string,
    readonly listId: number,
  ) {
    super(`Unknown list ${listId}`);
  }
}
