/**
 * `npm start`: the whole service locally. DynamoDB Local and s3rver keep
 * their data under DATA_DIR; the gateway serves every route on PORT.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { consoleEnv, loggedInvoke } from './console.js';
import { applyEnv, envForOtherProcesses, localNames, localServiceEnv } from './env.js';
import { startJobThread, type JobThread } from './job-thread.js';
import { ensureBuckets, ensureTable, isPortFree, startDynamoLocal, startS3Emulator, type Running } from './services.js';

const dataDir = resolve(process.env.DATA_DIR ?? '.data');
const port = Number(process.env.PORT ?? 3000);
const dynamoPort = Number(process.env.DYNAMODB_PORT ?? 8000);
const s3Port = Number(process.env.S3_PORT ?? 4569);
const running: Running[] = [];

/** LOCAL_QUEUE_CONCURRENCY, a whole number from 1 (default 1: DynamoDB Local applies one write at a time to its files anyway). */
function localConcurrency(): number {
  const given = Number(process.env.LOCAL_QUEUE_CONCURRENCY ?? 1);
  return Number.isInteger(given) && given >= 1 ? given : 1;
}

async function stopAll(code: number): Promise<never> {
  await Promise.allSettled(running.reverse().map((r) => r.stop()));
  process.exit(code);
}

async function main() {
  for (const [name, p] of [['PORT', port], ['DYNAMODB_PORT', dynamoPort], ['S3_PORT', s3Port]] as const) {
    if (!(await isPortFree(p))) {
      console.error(`Port ${p} (${name}) is already in use. Stop what uses it, or start with ${name}=<another port>.`);
      process.exit(1);
    }
  }
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));

  const dynamo = await startDynamoLocal({ port: dynamoPort, dataDir: join(dataDir, 'dynamodb') });
  running.push(dynamo);
  const s3 = await startS3Emulator({ port: s3Port, directory: join(dataDir, 's3') });
  running.push(s3);
  const baseUrl = `http://localhost:${port}`;
  const serviceEnv = localServiceEnv({ dynamoEndpoint: dynamo.endpoint, s3Endpoint: s3.endpoint, publicBaseUrl: baseUrl, dataDir });
  // One line per request and per job run; the handlers' Powertools logs with LOG_FORMAT=json (infra/local/console.ts).
  applyEnv({ ...serviceEnv, ...consoleEnv() });
  // The SQS queues of the jobs (page views) with their pollers, on a free port: before any handler is loaded.
  // Their consumers run in a worker thread of their own (./job-thread.ts), started once the environment is complete,
  // page views at most LOCAL_QUEUE_CONCURRENCY batches at once (on this machine's DynamoDB Local; what waits is not yet received).
  const { startLocalQueues } = await import('./queues.js');
  const thread: { current?: JobThread } = {};
  const queues = await startLocalQueues({ invoke: loggedInvoke((job, event) => thread.current!.invoke(job, event)), maxConcurrency: { trackingViews: localConcurrency() } });
  running.push(queues);
  applyEnv(queues.env, { override: true });
  const jobThread = await startJobThread();
  thread.current = jobThread;
  running.push({ endpoint: 'job thread', stop: () => jobThread.stop() });
  await ensureTable(dynamo.endpoint, localNames.TABLE_NAME);
  await ensureBuckets(s3.endpoint, [localNames.IMPORTS_BUCKET, localNames.EVENTS_BUCKET]);
  // The table's stream → counts, day statistics and subscriber events (its position kept beside the data).
  const { startLocalStream } = await import('./stream.js');
  const stream = await startLocalStream({ dynamoEndpoint: dynamo.endpoint, tableName: localNames.TABLE_NAME, positionFile: join(dataDir, 'stream-position.json') });
  running.push(stream);
  // What this process runs with (a variable the user set wins over serviceEnv's default), not the defaults.
  const env = { ...envForOtherProcesses([...Object.keys(serviceEnv), ...Object.keys(queues.env)]), LOCAL_STREAM_URL: stream.endpoint };
  writeFileSync(join(dataDir, 'local-env.json'), JSON.stringify(env, null, 2));

  // Imported after the environment is set: handlers read it when loaded.
  const { seedDemo } = await import('./seed.js');
  const { startLocalServer } = await import('./server.js');
  const demo = await seedDemo(dataDir, baseUrl);
  const { startScheduledJobs, startUploadJobs } = await import('./jobs.js');
  startUploadJobs(s3);
  // Raw event objects → the change queue → the webhook fan-out (and the local change bus).
  const { forwardChangeNotifications } = await import('./notifications.js');
  forwardChangeNotifications(s3, queues.env.CHANGES_QUEUE_URL);
  const server = await startLocalServer(port, console.log);
  running.push({ endpoint: baseUrl, stop: () => new Promise((done) => server.close(() => done())) });
  const stopJobs = startScheduledJobs();
  running.push({ endpoint: 'jobs', stop: () => Promise.resolve(stopJobs()) });

  console.log(`
Service running at ${baseUrl}   (data in ${dataDir}; Ctrl-C stops everything)
Demo client: ${join(dataDir, 'demo-client.json')}
Demo publisher site (recommendations): ${baseUrl}/demo/   browser library: ${baseUrl}/lib/v1/
Publisher dashboard: ${baseUrl}/dashboard/   (sign in as ${demo.username} with the api_key of demo-client.json)

Try this:
  TOKEN=$(curl -s "${baseUrl}/v1/token?username=${demo.username}&password=${demo.api_key}" | node -pe 'JSON.parse(require("fs").readFileSync(0)).token')
  curl -s -H "X-Service-Client-Token: $TOKEN" ${baseUrl}/v1/newsletters/lists
  curl -s ${baseUrl}/v1/openapi.json
`);
}

main().catch(async (err) => {
  console.error(`Could not start: ${err instanceof Error ? err.message : err}`);
  await stopAll(1);
});
