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
import type { ProvidedContext } from 'vitest';
import type { TestProject } from 'vitest/node';
import { applyEnv, localNames, localServiceEnv } from '../../infra/local/env.js';
import { readRecordings, startRecording } from '../../infra/local/recording.js';
import { startNotificationHub } from '../../infra/local/notifications.js';
import { ensureBuckets, ensureTable, freePort, startDynamoLocal, startS3Emulator } from '../../infra/local/services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    services: { dynamoEndpoint: string; s3Endpoint: string; dataDir: string };
    recordDir: string;
    /** The S3 notification hub (infra/local/notifications.ts): a test file subscribes its change queue to it. */
    notificationHub: string;
    /** The table stream's poller (infra/local/stream.ts): GET <it>/_local/stream/drain waits until every write so far is counted. */
    streamPoller: string;
  }
}

interface Started {
  provided: { services: ProvidedContext['services']; notificationHub: string; streamPoller: string; recordDir: string };
  stop(): Promise<void>;
}

export default async function setup(project: TestProject) {
  const started = await start();
  for (const [name, value] of Object.entries(started.provided)) project.provide(name as keyof Started['provided'], value);
  return () => started.stop();
}

async function start(): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'nl-test-'));
  const [dynamo, s3] = await Promise.all([
    freePort().then((port) => startDynamoLocal({ port })),
    freePort().then((port) => startS3Emulator({ port, directory: join(dataDir, 's3') })),
  ]);
  await ensureTable(dynamo.endpoint, localNames.TABLE_NAME);
  await ensureBuckets(s3.endpoint, [localNames.IMPORTS_BUCKET, localNames.EVENTS_BUCKET]);
  const hub = await startNotificationHub(s3);
  const recordDir = join(dataDir, 'recordings');
  startRecording(recordDir);
  // One poller for the whole run (every test file writes the one table): its consumer runs here, with the handlers' environment.
  applyEnv(localServiceEnv({ dynamoEndpoint: dynamo.endpoint, s3Endpoint: s3.endpoint, publicBaseUrl: 'http://127.0.0.1', dataDir }), { override: true });
  const { startLocalStream } = await import('../../infra/local/stream.js');
  const stream = await startLocalStream({ dynamoEndpoint: dynamo.endpoint, tableName: localNames.TABLE_NAME, log: (line) => console.error(line) });
  const provided = { services: { dynamoEndpoint: dynamo.endpoint, s3Endpoint: s3.endpoint, dataDir }, notificationHub: hub.endpoint, streamPoller: stream.endpoint, recordDir };
  const stop = async () => {
    await stream.stop();
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
  return { provided, stop };
}
