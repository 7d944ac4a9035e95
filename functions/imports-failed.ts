import { handleWorkerFailure, type AsyncFailureEvent } from '../shared/imports/worker.js';

/** The import worker's async onFailure destination: marks the event's files failed (no live worker on them). */
export const handler = (event: AsyncFailureEvent) => handleWorkerFailure(event);
