/** Errors of the imports domain: what happened and its context, never an HTTP status. */

/** Another worker took the file's lease: this one stops without saving. */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}
