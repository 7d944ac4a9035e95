/**
 * The queue consumers in a worker thread (bench/local-stack.ts
 * `startBenchStack({ jobsInThread })`): the local queues' pollers stay in the
 * parent and hand each batch here, where the job's real handler runs on its
 * own event loop with its own module instances (its own DynamoDB client), as
 * a separate Lambda function does. With `workerData.simClock` it follows the
 * parent's simulated clock (bench/sim-clock.ts); with `workerData.meter` it
 * counts its DynamoDB calls (bench/ddb-meter.ts) and answers a `report`.
 */
import { parentPort, workerData } from 'node:worker_threads';

const { simClock, meter } = (workerData ?? {}) as { simClock?: SharedArrayBuffer; meter?: boolean };
if (simClock) (await import('./sim-clock.js')).followSimClock(simClock);
const { invokeJob } = await import('../infra/local/jobs.js');
const { jobList } = await import('../shared/jobs.js');
const metered = meter ? (await import('./ddb-meter.js')).meter((await import('../shared/db/client.js')).ddb as never) : undefined;

type Request = { id: number; job: string; event: unknown } | { id: number; report: { per: number; label: string } };

parentPort!.on('message', (m: Request) => {
  if ('report' in m) {
    parentPort!.postMessage({ id: m.id, result: metered?.report(m.report.per, m.report.label) ?? [] });
    return;
  }
  const job = jobList.find((j) => j.id === m.job);
  if (!job) {
    parentPort!.postMessage({ id: m.id, error: `no job ${m.job}` });
    return;
  }
  invokeJob(job, m.event).then(
    (result) => parentPort!.postMessage({ id: m.id, result }),
    (err: unknown) => parentPort!.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
parentPort!.postMessage({ ready: true });
