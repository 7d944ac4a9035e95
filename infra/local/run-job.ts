/** `npm run job -- <id> [event JSON]`: runs one job now against the local stack (or TABLE_NAME's). */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { jobList } from '../../shared/jobs.js';
import { applyEnv } from './env.js';
import { invokeJob, scheduledEvent } from './jobs.js';

const [id, eventJson] = process.argv.slice(2);
const job = jobList.find((j) => j.id === id);
if (!job) {
  console.error(`Usage: npm run job -- <id> [event JSON]\nJobs: ${jobList.map((j) => `${j.id} (${j.summary})`).join(', ') || 'none'}`);
  process.exit(2);
}
const envFile = join(resolve(process.env.DATA_DIR ?? '.data'), 'local-env.json');
if (!process.env.TABLE_NAME && existsSync(envFile)) applyEnv(JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>);
invokeJob(job, eventJson ? JSON.parse(eventJson) : scheduledEvent()).then(
  (result) => console.log(JSON.stringify(result ?? { done: true }, null, 2)),
  (err: Error) => {
    console.error(`job ${id} failed: ${err.message}`);
    process.exit(1);
  },
);
