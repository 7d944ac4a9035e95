/**
 * Fixed one-minute windows counted atomically in DynamoDB, so the limit
 * holds across any number of concurrent Lambdas: a conditional ADD succeeds
 * exactly `limit` times per window. Counter items expire by `ttl`.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailure, tableName } from '../db/client.js';
import { keys } from '../db/keys.js';

export const WINDOW_MS = 60_000;

/** The window a moment falls in, and the seconds until it ends (at least 1: the Retry-After value). */
export function windowOf(nowMs: number, windowMs = WINDOW_MS): { window: number; retryAfterSeconds: number } {
  const window = Math.floor(nowMs / windowMs);
  return { window, retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * windowMs - nowMs) / 1000)) };
}

/**
 * Counts one request against `scope` in the current window (one minute
 * unless `windowMs` says otherwise). Returns false, without counting, when
 * the window already holds `limit` requests.
 */
export async function consume(scope: string, limit: number, nowMs = Date.now(), windowMs = WINDOW_MS): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
  const { window, retryAfterSeconds } = windowOf(nowMs, windowMs);
  // A limit of 0 closes the door: the condition below would let the window's first request in.
  if (limit <= 0) return { allowed: false, retryAfterSeconds };
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.rateLimit(scope, window),
        UpdateExpression: 'SET #ttl = if_not_exists(#ttl, :ttl) ADD #n :one',
        ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit',
        ExpressionAttributeNames: { '#n': 'count', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':ttl': Math.ceil(((window + 1) * windowMs) / 1000) + 300 },
      }),
    );
    return { allowed: true, retryAfterSeconds };
  } catch (err) {
    if (isConditionFailure(err)) return { allowed: false, retryAfterSeconds };
    throw err;
  }
}

/** Gives back one request counted by `consume` in the same window (for attempts that turned out not to count). */
export async function release(scope: string, nowMs = Date.now(), windowMs = WINDOW_MS): Promise<void> {
  const { window } = windowOf(nowMs, windowMs);
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.rateLimit(scope, window),
      UpdateExpression: 'ADD #n :minus',
      ConditionExpression: 'attribute_exists(#n)',
      ExpressionAttributeNames: { '#n': 'count' },
      ExpressionAttributeValues: { ':minus': -1 },
    }),
  ).catch((err: unknown) => {
    if (!isConditionFailure(err)) throw err;
  });
}
