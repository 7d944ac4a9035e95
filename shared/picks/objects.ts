/** Object keys of newsletter-picks jobs in IMPORTS_BUCKET. */

/**
 * A job's start and resume objects: the bucket notifies the newsletterPicksWorker job of objects created under
 * this prefix (shared/jobs.ts), as it notifies the import worker of uploads (a prefix apart: S3 refuses
 * overlapping notification prefixes).
 */
export const PICKS_REQUESTS_PREFIX = 'picks/requests/';
/** The worker's parts and results (no notification; they expire with the lifecycle rule of `picks/`). */
export const PICKS_RESULTS_PREFIX = 'picks/results/';
