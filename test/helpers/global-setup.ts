/**
 * Starts DynamoDB Local (in memory) and the s3rver emulator on free ports for
 * the whole run, creates the table and buckets, and hands the endpoints to
 * the test files. Everything it starts is stopped at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { localNames } from '../../infra/local/env.js';
import { startNotificationHub } from '../../infra/local/notifications.js';
import { ensureBuckets, ensureTable, freePort, startDynamoLocal, startS3Emulator } from '../../infra/local/services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    services: { dynamoEndpoint: string; s3Endpoint: string; dataDir: string };
    /** The S3 notification hub (infra/local/notifications.ts): a test file subscribes its change queue to it. */
    notificationHub: string;
  }
}

export default async function setup(project: TestProject) {
  const dataDir = mkdtempSync(join(tmpdir(), 'nl-test-'));
  const [dynamo, s3] = await Promise.all([
    freePort().then((port) => startDynamoLocal({ port })),
    freePort().then((port) => startS3Emulator({ port, directory: join(dataDir, 's3') })),
  ]);
  await ensureTable(dynamo.endpoint, localNames.TABLE_NAME);
  await ensureBuckets(s3.endpoint, [localNames.IMPORTS_BUCKET, localNames.EVENTS_BUCKET]);
  const hub = await startNotificationHub(s3);
  project.provide('services', { dynamoEndpoint: dynamo.endpoint, s3Endpoint: s3.endpoint, dataDir });
  project.provide('notificationHub', hub.endpoint);
  return async () => {
    await Promise.allSettled([hub.stop(), dynamo.stop(), s3.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  };
}
