/**
 * The newsletter-picks worker: each invocation continues a job from its checkpoint, writes the next part, then saves
 * where it stopped and puts the next resume object, or joins the parts into the result. Plain S3 commands keep its
 * bundle small (test/infra/bundle-size.test.ts).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { ddb, isConditionFailure, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';
import { planConcat, type PartSegment } from '../events/concat-plan.js';
import { logger } from '../observability/index.js';
import { s3 } from '../s3.js';
import { NDJSON, partKey, readJob, requestKey, resultKey, type JobItem, type PicksJobStatus } from './job-items.js';
import { runPicks, type PicksLine, type PicksPlan } from './picks.js';

/** Parts of the uploads: S3's minimum is 5 MiB (except the last). */
const UPLOAD_PART_BYTES = 8 * 1024 * 1024;

/** One object written in order by a multipart upload of UPLOAD_PART_BYTES parts (a single PutObject when small). */
class ObjectWriter {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private uploadId?: string;
  private readonly etags: string[] = [];
  size = 0;

  constructor(private readonly key: string) {}

  async write(bytes: Buffer): Promise<void> {
    this.chunks.push(bytes);
    this.buffered += bytes.length;
    this.size += bytes.length;
    if (this.buffered >= UPLOAD_PART_BYTES) await this.uploadBuffered();
  }

  /** A stored object (or a byte range of it) as the next part, copied inside S3 (at least 5 MiB unless last). */
  async copy(source: string, start: number, end: number): Promise<void> {
    if (this.buffered > 0) await this.uploadBuffered();
    await this.start();
    const out = await s3.send(
      new UploadPartCopyCommand({ ...this.target(), PartNumber: this.etags.length + 1, CopySource: `${config.importsBucket}/${source.split('/').map(encodeURIComponent).join('/')}`, CopySourceRange: `bytes=${start}-${end - 1}` }),
    );
    this.etags.push(out.CopyPartResult!.ETag!);
    this.size += end - start;
  }

  async close(): Promise<void> {
    if (!this.uploadId) {
      await s3.send(new PutObjectCommand({ Bucket: config.importsBucket, Key: this.key, Body: Buffer.concat(this.chunks), ContentType: NDJSON }));
      return;
    }
    if (this.buffered > 0) await this.uploadBuffered();
    await s3.send(new CompleteMultipartUploadCommand({ ...this.target(), MultipartUpload: { Parts: this.etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) } }));
  }

  async abort(): Promise<void> {
    if (this.uploadId) await s3.send(new AbortMultipartUploadCommand(this.target())).catch(() => undefined);
  }

  private target() {
    return { Bucket: config.importsBucket, Key: this.key, UploadId: this.uploadId! };
  }

  private async start(): Promise<void> {
    if (!this.uploadId) this.uploadId = (await s3.send(new CreateMultipartUploadCommand({ Bucket: config.importsBucket, Key: this.key, ContentType: NDJSON }))).UploadId!;
  }

  private async uploadBuffered(): Promise<void> {
    await this.start();
    const body = Buffer.concat(this.chunks);
    this.chunks = [];
    this.buffered = 0;
    const out = await s3.send(new UploadPartCommand({ ...this.target(), PartNumber: this.etags.length + 1, Body: body }));
    this.etags.push(out.ETag!);
  }
}

/** Bytes of a part made of segments (texts and ranges of stored objects: small, below twice 5 MiB). */
async function segmentBytes(segments: PartSegment[]): Promise<Buffer> {
  const buffers: Buffer[] = [];
  for (const segment of segments) {
    if ('text' in segment) buffers.push(Buffer.from(segment.text));
    else {
      const out = await s3.send(new GetObjectCommand({ Bucket: config.importsBucket, Key: segment.key, Range: `bytes=${segment.start}-${segment.end - 1}` }));
      buffers.push(Buffer.from(await out.Body!.transformToByteArray()));
    }
  }
  return Buffer.concat(buffers);
}

/** The parts joined into one object: large ranges copied inside S3 (events/concat-plan.ts), small ones read and uploaded. */
async function joinParts(key: string, parts: Array<{ key: string; size: number }>): Promise<void> {
  const writer = new ObjectWriter(key);
  try {
    for (const part of planConcat(parts)) {
      if ('copy' in part) await writer.copy(part.copy.key, part.copy.start, part.copy.end);
      else await writer.write(await segmentBytes(part.segments));
    }
    await writer.close();
  } catch (err) {
    await writer.abort();
    throw err;
  }
}

/**
 * One invocation of the worker for a job: continues from its checkpoint until the end of the list or until
 * `remainingMs()` is under PICKS_JOB_MARGIN_MS, writing its lines as the job's next part. Returns what it did.
 * A second delivery of the same request object finds the part already taken and does nothing.
 */
export async function runPicksJob(clientId: string, jobId: string, remainingMs: () => number, baseUrl = config.publicBaseUrl): Promise<{ job: string; members: number; status: PicksJobStatus | 'skipped' }> {
  const job = await readJob(clientId, jobId);
  if (!job || job.status === 'done' || job.status === 'failed') return { job: jobId, members: 0, status: 'skipped' };
  const step = job.parts.length + 1;
  try {
    // The step is this invocation's: the parts list has not grown since it was read, and no other invocation took it.
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.picksJob(clientId, jobId),
        UpdateExpression: 'SET #status = :running, #step = :step, #stepAt = :now',
        ConditionExpression: 'size(#parts) = :done AND (attribute_not_exists(#step) OR #step < :step) AND #status <> :failed',
        ExpressionAttributeNames: { '#status': 'status', '#step': 'step', '#parts': 'parts', '#stepAt': 'stepAt' },
        ExpressionAttributeValues: { ':running': 'running', ':step': step, ':done': step - 1, ':now': Date.now(), ':failed': 'failed' },
      }),
    );
  } catch (err) {
    if (isConditionFailure(err)) return { job: jobId, members: 0, status: 'skipped' };
    throw err;
  }
  const plan: PicksPlan = { clientId, listId: job.listId, blockKey: job.blockKey, rows: job.rows, rid: job.rid };
  try {
    const key = partKey(clientId, jobId, step);
    const writer = new ObjectWriter(key);
    const emit = (lines: PicksLine[]) => writer.write(Buffer.from(lines.map((l) => `${JSON.stringify(l)}\n`).join('')));
    let run: Awaited<ReturnType<typeof runPicks>>;
    try {
      run = await runPicks(plan, { startKey: job.cursor, emit, stop: () => remainingMs() < config.picksJobMarginMs, baseUrl });
      await writer.close();
    } catch (err) {
      await writer.abort();
      throw err;
    }
    const parts = [...job.parts, { key, size: writer.size }];
    const members = job.members + run.members;
    if (run.nextKey) {
      await ddb.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.picksJob(clientId, jobId),
          UpdateExpression: 'SET #parts = :parts, #cursor = :cursor, #members = :members',
          ConditionExpression: '#step = :step',
          ExpressionAttributeNames: { '#parts': 'parts', '#cursor': 'cursor', '#members': 'members', '#step': 'step' },
          ExpressionAttributeValues: { ':parts': parts, ':cursor': run.nextKey, ':members': members, ':step': step },
        }),
      );
      await s3.send(new PutObjectCommand({ Bucket: config.importsBucket, Key: requestKey(clientId, jobId, step + 1), Body: '' }));
      return { job: jobId, members, status: 'running' };
    }
    // One part: it is the result. Several: joined into one object inside S3 (parts of 5 MiB or more are copied, not read).
    let result = key;
    if (parts.length > 1) {
      result = resultKey(clientId, jobId);
      await joinParts(result, parts);
    }
    await finish(clientId, jobId, { status: 'done', parts, members, resultKey: result });
    return { job: jobId, members, status: 'done' };
  } catch (err) {
    // Not retried: the job says why (and the log), and the client asks again.
    logger.error('newsletter picks failed', { clientId, jobId, error: err as Error });
    await finish(clientId, jobId, { status: 'failed', error: `The picks could not be made: ${(err as Error).message}`.slice(0, 500) });
    return { job: jobId, members: 0, status: 'failed' };
  }
}

async function finish(clientId: string, jobId: string, o: { status: 'done' | 'failed'; parts?: JobItem['parts']; members?: number; resultKey?: string; error?: string }): Promise<void> {
  const set: Record<string, unknown> = { status: o.status, finishedAt: new Date().toISOString(), ...(o.parts ? { parts: o.parts } : {}), ...(o.members !== undefined ? { members: o.members } : {}), ...(o.resultKey ? { resultKey: o.resultKey } : {}), ...(o.error ? { error: o.error } : {}) };
  const names = Object.keys(set);
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.picksJob(clientId, jobId),
      UpdateExpression: `SET ${names.map((_, i) => `#n${i} = :v${i}`).join(', ')} REMOVE #cursor`,
      ExpressionAttributeNames: { ...Object.fromEntries(names.map((n, i) => [`#n${i}`, n])), '#cursor': 'cursor' },
      ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, set[n]])),
    }),
  );
}
