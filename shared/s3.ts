import { S3Client } from '@aws-sdk/client-s3';
import { config } from './config.js';

/** S3 client, created once per Lambda container. Endpoint comes from AWS_ENDPOINT_URL_S3. */
export const s3 = new S3Client({ forcePathStyle: config.s3ForcePathStyle });
