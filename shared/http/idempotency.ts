/**
 * `Idempotency-Key` on a write route (Stripe-style) with Powertools Idempotency in the service's table: a 2xx answer
 * is replayed for the same key and request, 422 for another request, 409 while the first runs; errors are not stored.
 * Records live in the client's own partition (`IDEM#<client>`), so keys are per client (docs/api.md).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { gunzipSync, gzipSync } from 'node:zlib';
import { captureClient } from '../observability/index.js';
import { recordSdkCalls } from '../recording.js';
import { keys } from '../db/keys.js';
import { tableDefinition } from '../db/table.js';
import { config } from '../config.js';
import { BadRequestError, HttpError } from './errors.js';
import type { HandlerInput } from './handler.js';
import type { HttpResult } from './response.js';
import type { RouteDef } from './route.js';

/** How long a key answers its first answer again: 24 hours. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
/** The header, as API Gateway hands it over (lower case). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Longest key. */
export const MAX_KEY_LENGTH = 255;
/** Printable ASCII (space to tilde): what fits an HTTP header value unambiguously. */
const PRINTABLE = /^[\x20-\x7e]+$/;
/** Largest stored answer (its gzip, base64): a DynamoDB item holds 400 KB with its keys and hashes. */
const MAX_STORED_BYTES = 350 * 1024;
/** Bodies above this are stored gzipped. */
const GZIP_FROM_BYTES = 8 * 1024;

/** An answer as it is stored: no undefined values (the persistence layer marshalls it as it is). */
interface StoredAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  gzip: boolean;
}

class UnprocessableError extends HttpError {
  constructor(cause: string) {
    super(422, cause);
  }
}

class InProgressError extends HttpError {
  constructor(cause: string, retryAfterSeconds: number) {
    super(409, cause, { 'retry-after': String(retryAfterSeconds) });
  }
}

/** Thrown inside the idempotent run for an answer too large to store: the key is released, the answer still goes out. */
class TooLargeToStore extends Error {
  override name = 'TooLargeToStore';
  constructor(readonly answer: HttpResult) {
    super('answer too large to store');
  }
}

const client = /* @__PURE__ */ captureClient(recordSdkCalls(new DynamoDBClient({})));

/** Checks the header; undefined when absent. */
export function idempotencyKeyOf(headers: Record<string, string | undefined>): string | undefined {
  const key = headers[IDEMPOTENCY_HEADER];
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !PRINTABLE.test(key)) {
    throw new BadRequestError(`header Idempotency-Key: must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters (got ${key.length === 0 ? 'an empty value' : `${key.length} characters${PRINTABLE.test(key) ? '' : ', not all printable'}`})`);
  }
  return key;
}

function store(answer: HttpResult): StoredAnswer {
  const headers = Object.fromEntries(Object.entries(answer.headers ?? {}).map(([name, value]) => [name, String(value)]));
  const body = answer.body ?? '';
  const gzip = Buffer.byteLength(body) > GZIP_FROM_BYTES;
  const stored = { statusCode: answer.statusCode, headers, body: gzip ? gzipSync(body).toString('base64') : body, gzip };
  if (Buffer.byteLength(stored.body) > MAX_STORED_BYTES) throw new TooLargeToStore(answer);
  return stored;
}

function replay(stored: StoredAnswer, replayed: boolean): HttpResult {
  const body = stored.gzip ? gunzipSync(Buffer.from(stored.body, 'base64')).toString('utf8') : stored.body;
  return { statusCode: stored.statusCode, headers: replayed ? { ...stored.headers, 'idempotent-replayed': 'true' } : stored.headers, body };
}

/**
 * Wraps a route's function so that an `Idempotency-Key` header makes it
 * idempotent (see the module comment). The row must say `idempotencyKey: true`
 * (the OpenAPI document then shows the header, 409 and 422).
 */
export function idempotent<R extends RouteDef & { idempotencyKey: true }>(
  route: R,
  fn: (input: HandlerInput<R>) => HttpResult | Promise<HttpResult>,
): (input: HandlerInput<R>) => Promise<HttpResult> {
  const routeKey = `${route.method} ${route.path}`;
  const timeoutSeconds = route.lambda?.timeoutSeconds ?? 29;
  return async (input) => {
    const key = idempotencyKeyOf(input.headers);
    if (key === undefined || input.clientId === undefined) return fn(input);
    const idempotencyConfig = new IdempotencyConfig({
      eventKeyJmesPath: 'key',
      payloadValidationJmesPath: 'request',
      expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
      hashFunction: 'sha256',
      responseHook: (response: unknown) => replay(response as StoredAnswer, true) as unknown as ReturnType<NonNullable<IdempotencyConfig['responseHook']>>,
    });
    idempotencyConfig.registerLambdaContext(input.context);
    const persistenceStore = new DynamoDBPersistenceLayer({
      tableName: config.tableName,
      keyAttr: tableDefinition.partitionKey,
      sortKeyAttr: tableDefinition.sortKey,
      staticPkValue: keys.idempotencyPartition(input.clientId),
      expiryAttr: tableDefinition.ttlAttribute,
      awsSdkV3Client: client,
    });
    const run = makeIdempotent(async (_payload: { key: string; request: unknown }) => store(await fn(input)), {
      persistenceStore,
      config: idempotencyConfig,
      keyPrefix: routeKey,
    });
    try {
      const answer = (await run({ key, request: { params: input.params ?? null, body: input.body ?? null } })) as StoredAnswer | HttpResult;
      // The first run returns what it stored; a replay went through the response hook already.
      return 'gzip' in answer ? replay(answer, false) : answer;
    } catch (err) {
      if (err instanceof TooLargeToStore) return err.answer;
      const name = err instanceof Error ? err.name : '';
      if (name === 'IdempotencyValidationError') {
        throw new UnprocessableError('header Idempotency-Key: already used within 24 hours for a different request (another body or path); use a new key for a new request');
      }
      if (name === 'IdempotencyAlreadyInProgressError') {
        // The first run holds the key until it answers, or at the latest until its Lambda deadline (the route's timeout).
        throw new InProgressError('header Idempotency-Key: a request with this key is still being processed; retry when it has answered', timeoutSeconds);
      }
      throw err;
    }
  };
}
