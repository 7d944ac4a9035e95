/**
 * DynamoDB Local's table stream handed to the `tableStream` job as Lambda's event source mapping does (filter, batch,
 * window, partial responses, bisect, retries); `drain()` (GET /_local/stream/drain) waits for every earlier write.
 */
import http from 'node:http';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, TrimmedDataAccessException, type _Record, type Shard } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { jobList, type JobDef } from '../../shared/jobs.js';
import { invokeJob } from './jobs.js';

type StreamJob = JobDef & { id: string; trigger: Extract<JobDef['trigger'], { tableStream: unknown }> };

interface ShardState {
  id: string;
  parent?: string;
  iterator?: string;
  /** The last sequence number handed over successfully. */
  position?: string;
  closed: boolean;
  /** TrimmedDataAccessException answers in a row. */
  trimmed?: number;
}

export interface LocalStream {
  endpoint: string;
  /** Batches that failed every retry, as the on-failure destination gets them. */
  failures: Array<{ records: number; error: string }>;
  drain(): Promise<void>;
  stop(): Promise<void>;
}

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

type Attribute = Record<string, unknown>;
/** An attribute value as Lambda's JSON has it: the streams client reads an empty map (`{"M":{}}`) as `{}`. */
function lambdaValue(value: Attribute): Attribute {
  if (Object.values(value).every((v) => v === undefined)) return { M: {} };
  if (value.M) return { M: lambdaImage(value.M as Record<string, Attribute>) };
  if (value.L) return { L: (value.L as Attribute[]).map(lambdaValue) };
  return value;
}
const lambdaImage = (image: Record<string, Attribute> | undefined) => image && Object.fromEntries(Object.entries(image).map(([k, v]) => [k, lambdaValue(v)]));

/** The record as Lambda hands it: its images as Lambda's JSON has them, its creation time in epoch seconds, the stream's ARN. */
function asLambdaRecord(r: _Record, arn: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  const at = Math.floor((d.ApproximateCreationDateTime?.getTime() ?? Date.now()) / 1000);
  const images = { NewImage: lambdaImage(d.NewImage as unknown as Record<string, Attribute>), OldImage: lambdaImage(d.OldImage as unknown as Record<string, Attribute>) };
  return { ...r, eventSourceARN: arn, dynamodb: { ...d, ...images, ApproximateCreationDateTime: at } } as DynamoDBRecord;
}

/** Starts polling the table's stream for the job with the `tableStream` trigger (none: a poller that does nothing). */
export async function startLocalStream({
  dynamoEndpoint,
  tableName,
  positionFile,
  log = console.log,
  invoke = invokeJob,
}: {
  dynamoEndpoint: string;
  tableName: string;
  positionFile?: string;
  log?: (line: string) => void;
  invoke?: (job: JobDef & { id: string }, event: unknown) => Promise<unknown>;
}): Promise<LocalStream> {
  const job = jobList.find((j) => 'tableStream' in j.trigger) as StreamJob | undefined;
  const ddb = new DynamoDBClient({ endpoint: dynamoEndpoint, region: 'us-east-1', credentials });
  const streams = new DynamoDBStreamsClient({ endpoint: dynamoEndpoint, region: 'us-east-1', credentials });
  const arn = (await ddb.send(new DescribeTableCommand({ TableName: tableName }))).Table?.LatestStreamArn;
  const saved: Record<string, string> = positionFile && existsSync(positionFile) ? (JSON.parse(readFileSync(positionFile, 'utf8')) as Record<string, string>) : {};
  const shards = new Map<string, ShardState>();
  const failures: LocalStream['failures'] = [];
  let stopped = false;
  let hurry = 0;
  let passes = 0;
  const waiters: Array<{ after: number; done: () => void }> = [];
  /** Ends the idle wait between passes (a drain does not wait for it). */
  let wake = () => undefined as void;
  const idle = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(done, ms);
      wake = () => (clearTimeout(timer), done());
    });

  async function refreshShards(): Promise<void> {
    let start: string | undefined;
    do {
      const out = await streams.send(new DescribeStreamCommand({ StreamArn: arn, ExclusiveStartShardId: start }));
      for (const s of out.StreamDescription?.Shards ?? ([] as Shard[])) {
        if (!shards.has(s.ShardId!)) shards.set(s.ShardId!, { id: s.ShardId!, parent: s.ParentShardId, position: saved[s.ShardId!], closed: false });
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  }

  async function iteratorOf(shard: ShardState): Promise<string | undefined> {
    const at = shard.position ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: shard.position } : { ShardIteratorType: 'TRIM_HORIZON' as const };
    const out = await streams.send(new GetShardIteratorCommand({ StreamArn: arn, ShardId: shard.id, ...at }));
    return out.ShardIterator;
  }

  /** Hands a batch to the job until it is applied (bisecting a failed batch), or gives it up after the retries. */
  async function deliver(records: DynamoDBRecord[], attempt = 0): Promise<void> {
    if (!job || records.length === 0) return;
    let failedFrom: number;
    let error = '';
    try {
      const result = (await invoke(job, { Records: records })) as { batchItemFailures?: Array<{ itemIdentifier: string }> } | undefined;
      const failed = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      failedFrom = records.findIndex((r) => failed.has(r.dynamodb?.SequenceNumber ?? ''));
      if (failedFrom < 0) return;
      error = 'partial batch failure';
    } catch (err) {
      failedFrom = 0;
      error = (err as Error).message;
    }
    const rest = records.slice(failedFrom);
    if (stopped) return;
    if (attempt >= job.trigger.tableStream.maxRetryAttempts) {
      failures.push({ records: rest.length, error });
      log(`stream ${job.id}: ${rest.length} records given up after ${attempt + 1} attempts: ${error}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
    if (failedFrom === 0 && rest.length > 1) {
      const half = Math.ceil(rest.length / 2);
      await deliver(rest.slice(0, half), attempt + 1);
      await deliver(rest.slice(half), attempt + 1);
    } else await deliver(rest, attempt + 1);
  }

  /**
   * One GetRecords call. DynamoDB Local at times refuses an iterator with TrimmedDataAccessException although nothing
   * was trimmed: the shard is read again from a fresh iterator, then from its oldest record (the consumer is idempotent).
   */
  async function readRecords(shard: ShardState) {
    try {
      return await streams.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: 1000 }));
    } catch (err) {
      shard.iterator = undefined;
      if (!(err instanceof TrimmedDataAccessException)) throw err;
      shard.trimmed = (shard.trimmed ?? 0) + 1;
      if (shard.trimmed > 1) {
        log(`stream: shard ${shard.id} refused its position as trimmed; reading it again from its oldest record`);
        shard.position = undefined;
        delete saved[shard.id];
      }
      throw err;
    }
  }

  /** Reads one shard to its tip, in batches; true when it handed anything over. */
  async function pollShard(shard: ShardState): Promise<boolean> {
    const { batchSize, maxBatchingWindowSeconds, keyPrefix } = job!.trigger.tableStream;
    shard.iterator ??= await iteratorOf(shard);
    let batch: DynamoDBRecord[] = [];
    let last: string | undefined;
    const windowEnd = performance.now() + maxBatchingWindowSeconds * 1000;
    let any = false;
    for (;;) {
      const out = shard.iterator ? await readRecords(shard) : { Records: [], NextShardIterator: undefined };
      shard.iterator = out.NextShardIterator;
      shard.trimmed = 0;
      for (const r of out.Records ?? []) {
        last = r.dynamodb?.SequenceNumber;
        if (String(r.dynamodb?.Keys?.sk?.S ?? '').startsWith(keyPrefix)) batch.push(asLambdaRecord(r, arn!));
        if (batch.length >= batchSize) {
          await deliver(batch);
          batch = [];
          any = true;
        }
      }
      if (!shard.iterator) shard.closed = true;
      const atTip = (out.Records ?? []).length === 0;
      if (atTip && (batch.length === 0 || hurry > 0 || performance.now() >= windowEnd || shard.closed)) break;
      if (atTip) await new Promise((r) => setTimeout(r, 50));
    }
    await deliver(batch);
    if (last) shard.position = saved[shard.id] = last;
    return any || batch.length > 0;
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        await refreshShards();
        let moved = false;
        for (const shard of shards.values()) {
          const parent = shard.parent ? shards.get(shard.parent) : undefined;
          if (shard.closed || (parent && !parent.closed)) continue;
          if (await pollShard(shard)) moved = true;
        }
        if (positionFile && moved) writeFileSync(positionFile, JSON.stringify(saved));
        passes++;
        for (const w of waiters.filter((w) => passes > w.after)) w.done();
        waiters.splice(0, waiters.length, ...waiters.filter((w) => passes <= w.after));
        if (!moved) await idle(250);
      } catch (err) {
        if (!stopped) log(`stream: polling failed: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  const drain = async () => {
    hurry++;
    // A whole pass that starts after this call reads every shard to its tip and hands everything over.
    const drained = new Promise<void>((done) => waiters.push({ after: passes + 1, done }));
    wake();
    await drained;
    hurry--;
  };
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/_local/stream/drain') void drain().then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"drained":true}'));
    else res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const running = job && arn ? loop() : Promise.resolve();
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    failures,
    drain: job && arn ? drain : () => Promise.resolve(),
    stop: async () => {
      stopped = true;
      wake();
      await new Promise<void>((done) => server.close(() => done()));
      await running;
      ddb.destroy();
      streams.destroy();
    },
  };
}
