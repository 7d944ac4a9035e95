/**
 * How long list writers hold and wait for a list: the list writer's timing,
 * in a module of its own so that the route descriptions and the error table
 * quote it without bundling the writer.
 */

/** A bulk write starts chunks under one hold of the lease for at most this long, then releases it. */
export const HOLD_MS = 5_000;
/** How long a writer waits for another's lease before giving up (ListBusyError). */
export const LEASE_WAIT_MS = 20_000;
/** Retry-After of a write refused because another large write held its list: the holder lets go at least this often. */
export const BUSY_RETRY_SECONDS = HOLD_MS / 1000;
