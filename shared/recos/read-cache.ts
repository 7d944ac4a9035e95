/**
 * Per-container copies, at most `READ_CACHE_SECONDS` old, of what every recommendation request would read again: a
 * client's popular list and the articles candidates name. Deletion stays exact: requests also read recent deletions
 * and never take a deleted article from here (shared/recos/recommend.ts).
 */

/** Longest age of a cached popular list or article. */
export const READ_CACHE_SECONDS = 60;

/**
 * Longest age of a container's copy of a block key item (its settings): a
 * change by `PUT /v1/blocks/{block_key}` or `admin block-settings` reaches
 * every warm recommendation and redirect container within this many seconds.
 */
export const BLOCK_KEY_CACHE_SECONDS = 30;

/**
 * Deletions are recorded per window of this many seconds; a request reads the
 * current and the previous window, so it sees every deletion of the last
 * `DELETION_WINDOW` seconds at least — far more than a cached copy's age plus
 * the popularity index's propagation delay.
 */
export const DELETION_WINDOW = 300;

/**
 * The popular snapshot (keys.popularSnapshot): the page-view consumer rewrites
 * a client's list of its most popular articles when it is older than this
 * (by the consumer's clock; one consumer takes the turn), so that a container
 * without its own copy reads one item instead of querying gsi1 for a page
 * of article items (the cold container of `bench:recos:latency`).
 */
export const POPULAR_SNAPSHOT_REFRESH_SECONDS = 60;

/**
 * A container takes the popular snapshot while it is younger than this. Its
 * articles come from a gsi1 Query made after `at`: an article deleted more
 * than the index's propagation delay before `at` is not in it, and the ones
 * deleted since are in the deletion windows every request reads, as long as
 * the snapshot's age plus its life as the container's copy
 * (`READ_CACHE_SECONDS`) stays 120 s inside `DELETION_WINDOW` (the margin
 * for the index's propagation).
 */
export const POPULAR_SNAPSHOT_MAX_AGE_SECONDS = DELETION_WINDOW - READ_CACHE_SECONDS - 120;

/** The two deletion windows a request at `now` (Unix seconds) reads: the current one and the one before. */
export function deletionWindows(now: number): number[] {
  const current = Math.floor(now / DELETION_WINDOW) * DELETION_WINDOW;
  return [current, current - DELETION_WINDOW];
}

export { monotonicMs, TtlCache } from '../ttl-cache.js';
