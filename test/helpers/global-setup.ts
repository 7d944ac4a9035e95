/**
 * Starts DynamoDB Local (in memory) and the s3rver emulator on free ports for
 * the whole run, creates the table and buckets, and hands the endpoints to
 * the test files. Everything it starts is stopped at the end. Every worker
 * records what the handlers do (infra/local/recording.ts) under one folder;
 * when the run ends the recordings are checked against the synthesized
 * template (test/helpers/deployed-access.ts) and a finding fails the run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { localNames } from '../../infra/local/env.js';
import { readRecordings } from '../../infra/local/recording.js';
import { startNotificationHub } from '../../infra/local/notifications.js';
import { ensureBuckets, ensureTable, freePort, startDynamoLocal, startS3Emulator } from '../../infra/local/services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    services: { dynamoEndpoint: string; s3Endpoint: string; dataDir: string };
    recordDir: string;
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
  const recordDir = join(dataDir, 'recordings');
  project.provide('recordDir', recordDir);
  return async () => {
    await Promise.allSettled([hub.stop(), dynamo.stop(), s3.stop()]);
    const recordings = readRecordings(recordDir);
    rmSync(dataDir, { recursive: true, force: true });
    if (recordings.length === 0) return;
    // Loaded only now: the CDK library is large, and runs that recorded nothing skip it.
    const { checkRecordings, synthesizedTemplate } = await import('./deployed-access.js');
    const findings = checkRecordings(recordings, synthesizedTemplate({ folded: true }));
    const functions = new Set(recordings.map((r) => r.fn)).size;
    if (findings.length > 0) {
      // An error thrown here is only printed: the exit code is what fails `npm test`.
      console.error(`Local is not what AWS allows (${findings.length} findings over ${functions} functions; test/helpers/deployed-access.ts):\n${findings.join('\n')}`);
      process.exitCode = 1;
      return;
    }
    console.log(`deployed access: ${recordings.length} recorded calls and reads of ${functions} functions are allowed by the synthesized template`);
  };
}
