/**
 * The imports sweeper (job `importsSweeper`, every few minutes): an import
 * whose worker died (a crash, a kill, a lost S3 notification) keeps its
 * checkpoint but nothing invokes the worker again. For each unfinished file
 * whose lease has run out (or that never had one for longer than a lease),
 * the sweeper leaves a resume marker; its creation invokes the worker, which
 * resumes from the checkpoint. A file that cannot progress fails after
 * MAX_STALLED_INVOCATIONS resumptions (shared/imports/worker.ts), with a
 * cause, so no file stays processing.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { config } from '../config.js';
import { s3 } from '../s3.js';
import { listUnfinishedImports, readFile } from './files.js';
import { resumeKey } from './objects.js';

export interface SweepSummary {
  /** Files given a resume marker. */
  resumed: Array<{ clientId: string; fileId: number }>;
  /** Unfinished files a live worker holds (or that were just uploaded). */
  running: number;
}

export async function sweepImports(now = Date.now()): Promise<SweepSummary> {
  const leaseMs = config.importLeaseSeconds * 1000;
  const summary: SweepSummary = { resumed: [], running: 0 };
  for (const { clientId, fileId } of await listUnfinishedImports()) {
    const file = await readFile(clientId, fileId);
    if (!file || (file.status !== 'uploaded' && file.status !== 'processing')) continue; // ended since the index was read
    const idleSince = file.leaseUntil ?? Date.parse(file.updatedAt) + leaseMs;
    if (idleSince >= now) {
      summary.running++;
      continue;
    }
    await s3.send(new PutObjectCommand({ Bucket: config.importsBucket, Key: resumeKey(clientId, fileId, now), Body: '' }));
    summary.resumed.push({ clientId, fileId });
  }
  return summary;
}
