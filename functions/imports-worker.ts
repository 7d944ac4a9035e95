import type { Context, S3Event } from 'aws-lambda';
import { handleUploadEvent } from '../shared/imports/worker.js';
import { jobHandler } from '../shared/observability/index.js';

/** S3 ObjectCreated under the uploads prefix (the stored file, or a resume marker) → one import run per record. */
export const handler = jobHandler('importsWorker', (event: S3Event, context: Context) => handleUploadEvent(event, context));
