/** Object keys of newsletter-picks jobs in IMPORTS_BUCKET (plain constants: the job table imports them). */

/** Objects created under this prefix start the `newsletterPicksWorker` job: a job's start and resume objects. */
export const PICKS_REQUESTS_PREFIX = 'picks/requests/';
/** The worker's parts and results. */
export const PICKS_RESULTS_PREFIX = 'picks/results/';
