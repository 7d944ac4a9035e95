import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchExecuteStatementCommand,
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type BatchWriteCommandInput,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { captureClient } from '../observability/index.js';
import { recordSdkCalls } from '../recording.js';

/**
 * Document client, created once per Lambda container. Endpoint comes from AWS_ENDPOINT_URL_DYNAMODB.
 * Pure: a bundle whose code never queries the table leaves the client out.
 */
export const ddb = /* @__PURE__ */ documentClient();

function documentClient() {
  const client = DynamoDBDocumentClient.from(captureClient(new DynamoDBClient({})), { marshallOptions: { removeUndefinedValues: true } });
  // The SDK's logger middleware copies every response through its sensitive-data filter even when nothing logs it
  // (no logger is configured), a visible share of a recommendation request's CPU. Nothing here logs it.
  client.middlewareStack.remove('loggerMiddleware');
  return recordSdkCalls(client);
}

export const tableName = () => config.tableName;

type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];
type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Backoff with full jitter: 50 ms base, doubling, capped at 2 s. */
export function backoffMs(attempt: number): number {
  return Math.random() * Math.min(2000, 50 * 2 ** attempt);
}

/**
 * Writes any number of put/delete requests with BatchWriteItem: chunks of 25,
 * `concurrency` requests in flight, UnprocessedItems retried with backoff.
 * Throws after `maxAttempts` rounds that still leave items unprocessed.
 */
export async function batchWrite(requests: WriteRequest[], { concurrency = 8, maxAttempts = 10 }: { concurrency?: number; maxAttempts?: number } = {}): Promise<void> {
  const chunks: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += 25) chunks.push(requests.slice(i, i + 25));
  await runPool(chunks, concurrency, async (chunk) => {
    let pending = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= maxAttempts) throw new UnprocessedError(`BatchWriteItem left ${pending.length} items unprocessed`);
      if (attempt > 0) await sleep(backoffMs(attempt));
      const out = await ddb.send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
      pending = out.UnprocessedItems?.[tableName()] ?? [];
    }
  });
}

/**
 * Runs `work` over `items` with at most `concurrency` in flight. After a
 * failure no new item starts; it rejects with the first failure once the
 * items in flight have settled (so a caller that then reads back what landed
 * sees everything that will land).
 */
export async function runPool<T>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  let failure: unknown;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        await work(items[index], index);
      } catch (err) {
        if (!failed) failure = err;
        failed = true;
      }
    }
  });
  await Promise.all(workers);
  if (failed) throw failure;
}

/** A PartiQL write statement (INSERT, UPDATE or DELETE) and its parameters. */
export interface WriteStatement {
  Statement: string;
  Parameters: unknown[];
}

/**
 * Runs write statements with BatchExecuteStatement: 25 a call, `concurrency` calls in flight. Each statement
 * succeeds or fails alone (its own condition). Returns, in order, undefined for each statement applied, its error
 * code for one refused, or the error of its call when the call itself failed (the other calls still run).
 */
export async function executeStatements(statements: WriteStatement[], { concurrency = 8 }: { concurrency?: number } = {}): Promise<Array<string | Error | undefined>> {
  const results = new Array<string | Error | undefined>(statements.length);
  const starts: number[] = [];
  for (let i = 0; i < statements.length; i += 25) starts.push(i);
  await runPool(starts, concurrency, async (start) => {
    const slice = statements.slice(start, start + 25);
    try {
      const out = await ddb.send(new BatchExecuteStatementCommand({ Statements: slice }));
      (out.Responses ?? []).forEach((response, i) => (results[start + i] = response.Error?.Code));
    } catch (err) {
      slice.forEach((_, i) => (results[start + i] = err as Error));
    }
  });
  return results;
}

/** A transaction of at most 100 items. Callers decide how to retry conflicts. */
export async function transactWrite(items: TransactItem[]): Promise<void> {
  if (items.length > 100) throw new Error(`A transaction takes at most 100 items, got ${items.length}`);
  await ddb.send(new TransactWriteCommand({ TransactItems: items }));
}

/**
 * Reads items by key with BatchGetItem (chunks of 100, strongly consistent),
 * retrying UnprocessedKeys with backoff.
 */
export async function batchGet<T>(
  keyList: Array<Record<string, string>>,
  {
    concurrency = 8,
    maxAttempts = 10,
    projection,
  }: { concurrency?: number; maxAttempts?: number; projection?: { ProjectionExpression: string; ExpressionAttributeNames: Record<string, string> } } = {},
): Promise<T[]> {
  const chunks: Array<Array<Record<string, string>>> = [];
  for (let i = 0; i < keyList.length; i += 100) chunks.push(keyList.slice(i, i + 100));
  const found: T[] = [];
  await runPool(chunks, concurrency, async (chunk) => {
    let pending = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt >= maxAttempts) throw new UnprocessedError(`BatchGetItem left ${pending.length} keys unprocessed`);
      if (attempt > 0) await sleep(backoffMs(attempt));
      const out = await ddb.send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: true, ...projection } } }));
      found.push(...((out.Responses?.[tableName()] ?? []) as T[]));
      pending = (out.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Array<Record<string, string>>;
    }
  });
  return found;
}

/** A batch left items unprocessed after every retry: DynamoDB's throttling, curable by a later retry. */
export class UnprocessedError extends Error {
  override name = 'UnprocessedError';
}

type SdkFault = Error & {
  code?: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
  CancellationReasons?: Array<{ Code?: string; Message?: string }>;
};

/** Error names of faults a later retry can cure: throttling, DynamoDB's own faults, timeouts. */
const RETRYABLE_NAMES = new Set([
  'UnprocessedError',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionInProgressException',
  'TransactionConflictException',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
]);
const RETRYABLE_CANCELLATIONS = new Set(['None', 'ConditionalCheckFailed', 'TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_SOCKET']);

/**
 * True for a storage fault that a retry of the same request can cure
 * (throttling, a 5xx of the service, a timeout, a network fault). Anything
 * else (a ValidationException for a value the table cannot hold, a missing
 * table, denied access) is a bug a retry repeats: false.
 */
export function isRetryableStorageFault(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const fault = err as SdkFault;
  if (fault.name === 'TransactionCanceledException') {
    return (fault.CancellationReasons ?? []).every((r) => RETRYABLE_CANCELLATIONS.has(r.Code ?? 'None'));
  }
  if (RETRYABLE_NAMES.has(fault.name)) return true;
  if (fault.code && NETWORK_CODES.has(fault.code)) return true;
  const status = fault.$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500;
  return Boolean(fault.$retryable) || (fault.cause instanceof Error && isRetryableStorageFault(fault.cause));
}

/** The fields of a storage error worth logging (never the request's values). */
export function faultDetail(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { error: String(err) };
  const fault = err as SdkFault;
  return {
    name: fault.name,
    message: fault.message,
    code: fault.code,
    httpStatusCode: fault.$metadata?.httpStatusCode,
    cancellationReasons: fault.CancellationReasons?.map((r) => r.Code),
    stack: fault.stack,
  };
}

/** True when a single-item write was refused by its ConditionExpression. */
export function isConditionFailure(err: unknown): boolean {
  return err instanceof Error && err.name === 'ConditionalCheckFailedException';
}

/** True when a transaction was cancelled by a failed condition or a conflicting transaction (worth re-reading and retrying). */
export function isTransactionConflict(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== 'TransactionCanceledException') return err instanceof Error && err.name === 'TransactionConflictException';
  return reasonCodes(err).every((code) => ['None', 'ConditionalCheckFailed', 'TransactionConflict'].includes(code));
}

/** The cancellation reason codes of a cancelled transaction, one per item (empty for another error). */
export function reasonCodes(err: unknown): string[] {
  return ((err as Error & { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? []).map((r) => r.Code ?? 'None');
}

export { sleep };

/** The pages of a Query, one array of items per page, following LastEvaluatedKey to the end. */
export async function* queryPages<T = Record<string, unknown>>(input: QueryCommandInput): AsyncGenerator<T[]> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await ddb.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey }));
    yield (out.Items ?? []) as T[];
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}

/** Every item of a Query, across pages. */
export async function queryAll<T = Record<string, unknown>>(input: QueryCommandInput): Promise<T[]> {
  const items: T[] = [];
  for await (const page of queryPages<T>(input)) items.push(...page);
  return items;
}
