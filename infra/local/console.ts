/**
 * What `npm start` prints: one line per request (method, path, status, milliseconds) and one per job run. The
 * handlers' Powertools lines are silenced; `LOG_FORMAT=json` turns them back on, one JSON object per line.
 */
import type { JobDef } from '../../shared/jobs.js';

/** The Powertools settings of the console, before any handler loads (a variable the user set wins: applyEnv). */
export function consoleEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return env.LOG_FORMAT === 'json' ? { POWERTOOLS_DEV: 'false' } : { POWERTOOLS_LOG_LEVEL: 'SILENT' };
}

/** `GET /v1/newsletters/lists 200 12 ms` */
export function requestLine(method: string, path: string, status: number, ms: number): string {
  return `${method} ${path} ${status} ${Math.round(ms)} ms`;
}

const MAX_SUMMARY = 160;

/** `job optinReminders 35 ms {"sent":0}`, or `job … failed: <message>`; a long result is cut to one short line. */
export function jobLine(id: string, ms: number, outcome: { result: unknown } | { error: Error }): string {
  if ('error' in outcome) return `job ${id} ${Math.round(ms)} ms failed: ${outcome.error.message.split('\n')[0]}`;
  const summary = JSON.stringify(outcome.result ?? 'done') ?? 'done';
  return `job ${id} ${Math.round(ms)} ms ${summary.length > MAX_SUMMARY ? `${summary.slice(0, MAX_SUMMARY - 1)}…` : summary}`;
}

type Invoke = (job: JobDef & { id: string }, event: unknown) => Promise<unknown>;

/** `invoke` that prints one {@link jobLine} per run (what it returns or throws is passed on). */
export function loggedInvoke(invoke: Invoke, log: (line: string) => void = console.log): Invoke {
  return async (job, event) => {
    const started = performance.now();
    try {
      const result = await invoke(job, event);
      log(jobLine(job.id, performance.now() - started, { result }));
      return result;
    } catch (err) {
      log(jobLine(job.id, performance.now() - started, { error: err as Error }));
      throw err;
    }
  };
}
