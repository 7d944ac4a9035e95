import { S3Client } from '@aws-sdk/client-s3';
import { config } from './config.js';
import { captureClient } from './observability/index.js';
import { recordSdkCalls } from './recording.js';

/**
 * S3 client, created once per Lambda container. Endpoint comes from AWS_ENDPOINT_URL_S3.
 * Pure: a bundle whose code never sends to S3 leaves the client out.
 */
export const s3 = /* @__PURE__ */ (() => captureClient(recordSdkCalls(new S3Client({ forcePathStyle: config.s3ForcePathStyle }))))();
