/**
 * The imports sweeper (job `importsSweeper`): a file whose worker died keeps its checkpoint but nothing invokes the
 * worker again, so for each unfinished file with an expired lease it leaves a resume marker whose creation does.
 * A file that cannot progress fails after MAX_STALLED_INVOCATIONS resumptions, so none stays processing.
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
