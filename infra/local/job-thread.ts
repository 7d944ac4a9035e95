/**
 * The queue consumers of `npm start` in a worker thread of their own: the pollers stay in the main thread and hand
 * each batch to it, so a heavy batch neither blocks the gateway's requests nor shares their event loop, as a separate
 * Lambda function would not. It has the young generation of a function of the default memory (infra/heap.ts).
 */
import { Worker } from 'node:worker_threads';
import { DEFAULT_FUNCTION_MEMORY_MB, youngGenerationMb } from '../heap.js';
import type { JobDef } from '../../shared/jobs.js';

export interface JobThread {
  invoke(job: JobDef & { id: string }, event: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** A TypeScript module in a worker thread (through tsx's loader) answering `ask`'s messages by id; resolves once it is ready. */
export async function startTsWorker(entry: string, workerData?: unknown): Promise<{ ask(message: Record<string, unknown>): Promise<unknown>; stop(): Promise<void> }> {
  const worker = new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, {
    eval: true,
    workerData,
    resourceLimits: { maxYoungGenerationSizeMb: youngGenerationMb(DEFAULT_FUNCTION_MEMORY_MB) },
  });
  await new Promise<void>((done, fail) => {
    worker.once('message', () => done());
    worker.once('error', fail);
  });
  let next = 0;
  const waiting = new Map<number, { done: (v: unknown) => void; fail: (e: Error) => void }>();
  worker.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error !== undefined) w?.fail(new Error(m.error));
    else w?.done(m.result);
  });
  worker.on('error', (err) => {
    for (const w of waiting.values()) w.fail(err);
    waiting.clear();
  });
  return {
    ask: (message) =>
      new Promise((done, fail) => {
        const id = next++;
        waiting.set(id, { done, fail });
        worker.postMessage({ ...message, id });
      }),
    stop: async () => {
      await worker.terminate();
    },
  };
}

/** Starts the thread with this process's environment (start it once the environment is set); resolves when it is ready. */
export async function startJobThread(): Promise<JobThread> {
  const worker = await startTsWorker(new URL('./job-worker.ts', import.meta.url).href);
  return { invoke: (job, event) => worker.ask({ job: job.id, event }), stop: () => worker.stop() };
}
