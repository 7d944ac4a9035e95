/**
 * The entry of the queue consumers' worker thread (./job-thread.ts): runs each batch the parent hands it with the
 * job's real handler, on this thread's own event loop and module instances, as a separate Lambda function would.
 */
import { parentPort } from 'node:worker_threads';

const { invokeJob } = await import('./jobs.js');
const { jobList } = await import('../../shared/jobs.js');

parentPort!.on('message', (m: { id: number; job: string; event: unknown }) => {
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
