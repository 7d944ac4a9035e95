import { handleWorkerFailure, type AsyncFailureEvent } from '../shared/imports/worker.js';
import { jobHandler } from '../shared/observability/index.js';

/** The import worker's async onFailure destination: marks the event's files failed (no live worker on them). */
export const handler = jobHandler('importsWorkerFailed', (event: AsyncFailureEvent) => handleWorkerFailure(event));
