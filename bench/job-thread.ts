/**
 * The queue consumers in a worker thread (bench/local-stack.ts
 * `startBenchStack({ jobsInThread })`): the local queues' pollers stay in the
 * parent and hand each batch here, where the job's real handler runs on its
 * own event loop with its own module instances (its own DynamoDB client), as
 * a separate Lambda function does. With `workerData.simClock` it runs on the
 * simulated clock (bench/sim-clock.ts), at each queue batch's send time: see
 * {@link batchSentAt} (from the first batch on, the thread's clock is its
 * own: it no longer follows the parent's `setSimNow`; a job without SQS
 * records runs at the last batch's time plus the real time since, so run
 * only queue consumers here when the clock is simulated); with `workerData.meter` it
 * counts its DynamoDB calls (bench/ddb-meter.ts) and answers a `report`.
 */
import { parentPort, workerData } from 'node:worker_threads';

const { simClock, meter } = (workerData ?? {}) as { simClock?: SharedArrayBuffer; meter?: boolean };
const clock = simClock ? await import('./sim-clock.js') : undefined;
clock?.followSimClock(simClock!);
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
  const sentAt = batchSentAt(m.event);
  if (clock && sentAt !== undefined) clock.advanceOwnSimClock(sentAt);
  invokeJob(job, m.event).then(
    (result) => parentPort!.postMessage({ id: m.id, result }),
    (err: unknown) => parentPort!.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
parentPort!.postMessage({ ready: true });

/**
 * The latest SentTimestamp of an SQS batch's messages. On the simulated clock
 * a replay compresses hours of a log into seconds, so a consumer that lags a
 * few real seconds behind the load (it shares 2 cores with it) would apply
 * views hours after their simulated time, and its time-based work (co-read
 * recency, the popular snapshot once a minute) would see a log that never
 * happened; at the log's real pace, as in AWS, it applies a batch moments
 * after it was sent. So the consumer's clock stands at the send time of the
 * batch it applies (never moving back), not at the load's.
 */
function batchSentAt(event: unknown): number | undefined {
  const records = (event as { Records?: Array<{ attributes?: { SentTimestamp?: string } }> } | undefined)?.Records;
  if (!Array.isArray(records)) return undefined;
  const sent = records.map((r) => Number(r.attributes?.SentTimestamp)).filter((n) => Number.isFinite(n));
  return sent.length > 0 ? Math.max(...sent) : undefined;
}
