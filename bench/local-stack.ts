/**
 * Starts a private local stack for a benchmark: DynamoDB Local (in memory),
 * s3rver in a temporary folder, the table, the buckets and the gateway, and
 * points this process's handlers at them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyEnv, localNames, localServiceEnv } from '../infra/local/env.js';
import { ensureBuckets, ensureTable, freePort, startDynamoLocal, startS3Emulator } from '../infra/local/services.js';
import { Worker } from 'node:worker_threads';
import { DEFAULT_FUNCTION_MEMORY_MB, youngGenerationMb } from '../infra/heap.js';
import { startTsWorker } from '../infra/local/job-thread.js';

/** The function threads' young generation: a function's of the default memory in Lambda (infra/heap.ts). */
const FUNCTION_HEAP = { maxYoungGenerationSizeMb: youngGenerationMb(DEFAULT_FUNCTION_MEMORY_MB) };

export async function startBenchStack(o: { jobsInThread?: { simClock?: SharedArrayBuffer; meter?: boolean } } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'nl-bench-'));
  const dynamo = await startDynamoLocal({ port: await freePort() });
  const s3 = await startS3Emulator({ port: await freePort(), directory: join(dataDir, 's3') });
  await ensureTable(dynamo.endpoint, localNames.TABLE_NAME);
  await ensureBuckets(s3.endpoint, [localNames.IMPORTS_BUCKET, localNames.EVENTS_BUCKET]);
  const { startLocalQueues } = await import('../infra/local/queues.js');
  let jobs: JobThread | undefined;
  const queues = await startLocalQueues({ log: () => undefined, ...(o.jobsInThread ? { invoke: (job: { id: string }, event: unknown) => jobs!.invoke(job.id, event) } : {}) });
  applyEnv({ ...localServiceEnv({ dynamoEndpoint: dynamo.endpoint, s3Endpoint: s3.endpoint, publicBaseUrl: 'http://127.0.0.1', dataDir }), ...queues.env }, { override: true });
  // After the environment: a worker thread gets a copy of it when it starts.
  if (o.jobsInThread) jobs = await jobThread(o.jobsInThread);
  // The table stream's consumer (counts, day statistics, subscriber events), where the queues' jobs run.
  const { startLocalStream } = await import('../infra/local/stream.js');
  const stream = await startLocalStream({ dynamoEndpoint: dynamo.endpoint, tableName: localNames.TABLE_NAME, log: (line) => console.error(line), ...(jobs ? { invoke: (job: { id: string }, event: unknown) => jobs.invoke(job.id, event) } : {}) });
  const { createGateway, listen } = await import('../infra/local/gateway.js');
  const server = createGateway();
  const url = `http://127.0.0.1:${await listen(server, 0)}`;
  process.env.PUBLIC_BASE_URL = url;
  return {
    url,
    dataDir,
    /** DynamoDB Local's JVM (its CPU time: {@link cpuSpan}). */
    dynamoPid: dynamo.pid,
    queues,
    jobs,
    /** Resolves once every write so far is counted (infra/local/stream.ts). */
    streamDrained: () => stream.drain(),
    async stop() {
      await new Promise<void>((done) => server.close(() => done()));
      await stream.stop();
      await queues.stop();
      await jobs?.stop();
      await Promise.allSettled([dynamo.stop(), s3.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface JobThread {
  invoke(job: string, event: unknown): Promise<unknown>;
  /** With `meter`: the thread's DynamoDB calls per `per` units of work (bench/ddb-meter.ts `report`). */
  report(per: number, label: string): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * The queue consumers in a worker thread (bench/job-thread.ts): the local queues
 * invoke the jobs there, beside the gateway's thread and the load, as Lambda runs
 * the consumer function beside the request functions.
 */
async function jobThread(o: { simClock?: SharedArrayBuffer; meter?: boolean }): Promise<JobThread> {
  const worker = await startTsWorker(new URL('./job-thread.ts', import.meta.url).href, o);
  return {
    invoke: (job, event) => worker.ask({ job, event }),
    report: async (per, label) => (await worker.ask({ report: { per, label } })) as string[],
    stop: () => worker.stop(),
  };
}

/** Runs `work` and returns its wall time in milliseconds. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** A process's CPU time (user + system) so far, in ms, from /proc (Linux); undefined where it cannot be read. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th (clock ticks of 10 ms).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * Starts counting the CPU time of this process (the gateway's handlers, the S3 emulator, the load) and of DynamoDB
 * Local's JVM (`dynamoPid`); the returned function gives each one's since then, in ms (`dynamo` undefined where
 * /proc cannot be read). On a machine whose cores are all busy, a phase's time follows the CPU time all its
 * processes need, so these say where a difference between two phases goes.
 */
export function cpuSpan(dynamoPid: number | undefined): () => { self: number; dynamo: number | undefined } {
  const self0 = process.cpuUsage();
  const dynamo0 = processCpuMs(dynamoPid);
  return () => {
    const self = process.cpuUsage(self0);
    const dynamo = processCpuMs(dynamoPid);
    return { self: (self.user + self.system) / 1000, dynamo: dynamo === undefined || dynamo0 === undefined ? undefined : dynamo - dynamo0 };
  };
}

/** Peak resident set size of this process so far, in MiB. */
export const peakRssMiB = () => Math.round(process.resourceUsage().maxRSS / 1024);

/**
 * Starts a local gateway in a worker thread (bench/gateway-thread.ts,
 * TypeScript through tsx's loader), with this process's environment (start it
 * after {@link startBenchStack}): requests are then handled beside this
 * thread's work (the queue's consumer, the load), as separate Lambda
 * functions run beside each other. `simClock`: follow this thread's simulated
 * clock (bench/sim-clock.ts `simClockBuffer`). Resolves with its URL and a stop.
 */
export async function gatewayThread(o: { simClock?: SharedArrayBuffer } = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  const entry = new URL('./gateway-thread.ts', import.meta.url).href;
  const worker = new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, { eval: true, workerData: { simClock: o.simClock }, resourceLimits: FUNCTION_HEAP });
  const port = await new Promise<number>((done, fail) => {
    worker.once('message', (m: { port: number }) => done(m.port));
    worker.once('error', fail);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((done) => {
        worker.once('exit', () => done());
        worker.postMessage('stop');
      }),
  };
}
