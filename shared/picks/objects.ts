/** Object keys of newsletter-picks jobs in IMPORTS_BUCKET. */
import { UPLOADS_PREFIX } from '../imports/objects.js';

/**
 * A job's start and resume objects: under the uploads prefix, so the import worker's function (the bucket's
 * notification) runs them; `fileOfKey` never matches them (four segments after `uploads/`).
 */
export const PICKS_REQUESTS_PREFIX = `${UPLOADS_PREFIX}picks/`;
/** The worker's parts and results (no notification; they expire with the lifecycle rule of `picks/`). */
export const PICKS_RESULTS_PREFIX = 'picks/results/';
