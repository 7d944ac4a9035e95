/**
 * Records, per function, what the handlers do under the local runtime: each
 * AWS SDK call as the IAM action it needs and the resource it touches, and
 * each environment variable read through shared/config.ts. The local gateway
 * and the job runner run every invocation inside {@link inFunction}; the
 * hooks of shared/recording.ts report to the recorder installed by
 * {@link startRecording}. The tests start it in every worker and compare all
 * recordings with the synthesized template when the run ends
 * (test/helpers/deployed-access.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Recorder } from '../../shared/recording.js';

/** What a recorded call touched: a table (or one of its indexes), a bucket (or an object in it), a queue. */
export interface RecordedResource {
  /** The name as the call gave it (table name, bucket name, queue URL). */
  name: string;
  /** The environment variables whose value is that name: how the stack's template says which resource it is. */
  env: string[];
  index?: string;
  /** An object key (S3 object actions). */
  key?: string;
}

export type Recording =
  | { fn: string; kind: 'call'; action: string; resource?: RecordedResource; command: string }
  | { fn: string; kind: 'env'; name: string; required: boolean };

const current = new AsyncLocalStorage<string>();
/** What this process recorded (each record once). */
const here: Recording[] = [];

/** The records this process made since {@link startRecording}. */
export function recordedHere(): Recording[] {
  return [...here];
}

/** Whether {@link startRecording} ran in this thread. */
let recording = false;

/**
 * Runs `run` as an invocation of the function `fn` (a route or job id): what it does is recorded as that function's.
 * Before {@link startRecording} (a benchmark's stack, `npm start`) it just runs it: on Node 20 an AsyncLocalStorage
 * in use puts hooks on every promise of the thread, a CPU cost Lambda does not pay.
 */
export function inFunction<T>(fn: string, run: () => T): T {
  return recording ? current.run(fn, run) : run();
}

/** S3 commands and the IAM actions they need (a copy also reads its source: {@link s3Calls}). */
const S3_ACTIONS: Record<string, string> = {
  PutObject: 's3:PutObject',
  CreateMultipartUpload: 's3:PutObject',
  UploadPart: 's3:PutObject',
  CompleteMultipartUpload: 's3:PutObject',
  UploadPartCopy: 's3:PutObject',
  CopyObject: 's3:PutObject',
  AbortMultipartUpload: 's3:AbortMultipartUpload',
  GetObject: 's3:GetObject',
  HeadObject: 's3:GetObject',
  DeleteObject: 's3:DeleteObject',
  DeleteObjects: 's3:DeleteObject',
  ListObjectsV2: 's3:ListBucket',
  ListObjects: 's3:ListBucket',
  ListParts: 's3:ListMultipartUploadParts',
};
/** S3 actions on the bucket itself rather than on its objects. */
const BUCKET_ACTIONS = new Set(['s3:ListBucket']);
/** Commands whose IAM action has another name. */
const RENAMED: Record<string, string> = { 'sqs:SendMessageBatch': 'sqs:SendMessage', 'sqs:DeleteMessageBatch': 'sqs:DeleteMessage' };

type Input = Record<string, unknown>;
interface Call {
  action: string;
  resource?: RecordedResource;
}

function envOf(name: string): string[] {
  return Object.entries(process.env)
    .filter(([variable, value]) => value === name && /^[A-Z][A-Z0-9_]*$/.test(variable))
    .map(([variable]) => variable);
}

const resource = (name: string, extra: Partial<RecordedResource> = {}): RecordedResource => ({ name, env: envOf(name), ...extra });

function dynamoCalls(command: string, input: Input): Call[] {
  const transact = input.TransactItems as Array<Record<string, Input>> | undefined;
  if (transact) {
    const actions: Record<string, string> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem', Get: 'GetItem' };
    return transact.flatMap((item) => Object.entries(item).map(([kind, op]) => ({ action: `dynamodb:${actions[kind] ?? kind}`, resource: resource(String(op.TableName)) })));
  }
  if (Array.isArray(input.Statements)) {
    // PartiQL: the action is per statement kind (dynamodb:PartiQLInsert, …), the table is named in the statement.
    return (input.Statements as Array<{ Statement: string }>).map(({ Statement }) => {
      const [, kind = '', table = ''] = /^\s*(\w+)\s+(?:INTO\s+|FROM\s+)?"([^"]+)"/i.exec(Statement) ?? [];
      return { action: `dynamodb:PartiQL${kind.charAt(0).toUpperCase()}${kind.slice(1).toLowerCase()}`, resource: resource(table) };
    });
  }
  const action = `dynamodb:${command}`;
  if (input.RequestItems) return Object.keys(input.RequestItems as Input).map((table) => ({ action, resource: resource(table) }));
  const table = String(input.TableName);
  return [{ action, resource: resource(table, typeof input.IndexName === 'string' ? { index: input.IndexName } : {}) }];
}

function s3Calls(command: string, input: Input): Call[] {
  const action = S3_ACTIONS[command] ?? `s3:unmapped:${command}`;
  const bucket = String(input.Bucket);
  const calls: Call[] = [{ action, resource: resource(bucket, BUCKET_ACTIONS.has(action) ? {} : { key: typeof input.Key === 'string' ? input.Key : input.Delete ? '*' : '' }) }];
  if (typeof input.CopySource === 'string') {
    const [source, ...key] = decodeURIComponent(input.CopySource).replace(/^\//, '').split('/');
    calls.push({ action: 's3:GetObject', resource: resource(source, { key: key.join('/') }) });
  }
  return calls;
}

/** The IAM actions and resources one SDK command needs. */
export function callsOf(clientName: string, commandName: string, input: unknown): Call[] {
  const service = clientName.replace(/Client$/, '').replace(/^SESv2$/, 'SES').replace(/^DynamoDBDocument$/, 'DynamoDB').replace(/^EventBridge$/, 'Events').toLowerCase();
  const command = commandName.replace(/Command$/, '');
  const given = (input ?? {}) as Input;
  if (service === 'dynamodb') return dynamoCalls(command, given);
  if (service === 's3') return s3Calls(command, given);
  const action = RENAMED[`${service}:${command}`] ?? `${service}:${command}`;
  if (service === 'sqs') return [{ action, resource: resource(String(given.QueueUrl)) }];
  if (service === 'ses') return [{ action, resource: resource(String(given.FromEmailAddress)) }];
  // Another service: the resource is the input's value (at the top or one level down, e.g. PutEvents' EventBusName)
  // that an environment variable names; none, and the role must allow the action on any resource.
  const named = namedValue(given);
  return [named ? { action, resource: resource(named) } : { action }];
}

function namedValue(input: unknown, depth = 0): string | undefined {
  if (typeof input === 'string') return envOf(input).length > 0 ? input : undefined;
  if (depth > 2 || !input || typeof input !== 'object') return undefined;
  for (const value of Array.isArray(input) ? input.slice(0, 1) : Object.values(input)) {
    const found = namedValue(value, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Installs the recorder in this process: each new record (per function,
 * action, resource, and per function and variable) is appended to
 * `<dir>/<pid>.jsonl`. Object keys count by their first path segment, so a
 * run writes a few hundred lines, not one per object.
 */
export function startRecording(dir: string): void {
  mkdirSync(dir, { recursive: true });
  recording = true;
  const file = join(dir, `${process.pid}.jsonl`);
  const seen = new Set<string>();
  const write = (record: Recording, identity: string) => {
    if (seen.has(identity)) return;
    seen.add(identity);
    here.push(record);
    appendFileSync(file, `${JSON.stringify(record)}\n`);
  };
  const recorder: Recorder = {
    sdkCall(clientName, commandName, input) {
      const fn = current.getStore();
      if (!fn) return;
      for (const call of callsOf(clientName, commandName, input)) {
        const r = call.resource;
        write({ fn, kind: 'call', command: `${clientName}.${commandName}`, ...call }, JSON.stringify([fn, call.action, r?.name, r?.index, r?.key?.split('/')[0]]));
      }
    },
    envRead(name, required) {
      const fn = current.getStore();
      if (fn) write({ fn, kind: 'env', name, required }, JSON.stringify([fn, name, required]));
    },
  };
  (globalThis as { __serviceRecorder?: Recorder }).__serviceRecorder = recorder;
}

/** Every record written under `dir` (by every process). */
export function readRecordings(dir: string): Recording[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) =>
      readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Recording),
    );
}
