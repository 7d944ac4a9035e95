/** Errors of lists (shared/http/error-table.ts maps them by `name`). */
export class ListsError extends Error {
  override name = 'ListsError';
}

/** The client has no list with this id. */
export class UnknownListError extends ListsError {
  override name = 'UnknownListError';
  constructor(
    readonly clientId: string,
    readonly listId: number,
  ) {
    super(`Unknown list ${listId}`);
  }
}
