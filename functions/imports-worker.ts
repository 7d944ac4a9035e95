import type { Context, S3Event } from 'aws-lambda';
import { handleUploadEvent } from '../shared/imports/worker.js';

/** S3 ObjectCreated under the uploads prefix (the stored file, or a resume marker) → one import run per record. */
export const handler = (event: S3Event, context: Context) => handleUploadEvent(event, context);
