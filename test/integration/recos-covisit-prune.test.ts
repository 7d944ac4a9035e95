/**
 * Pruning a co-visit item past COVISIT_PRUNE_AT must not lose counts a concurrent batch ADDs meanwhile. The race is
 * forced: a middleware on the service's client runs the other batch's ADD just before the pruning PutItem is sent.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { addCoReadCounts, COVISIT_VERSION, toCovisits } from '../../shared/recos/dynamo-items.js';
import { COVISIT_CAP, COVISIT_PRUNE_AT } from '../../shared/recos/limits.js';
import { useService } from '../helpers/service.js';

useService();

/** Runs before the next PutItem calls (`times` of them), with the item's key. */
let beforePut: { times: number; hook: (key: string) => Promise<void> } | undefined;
ddb.middlewareStack.add(
  (next, context) => async (args) => {
    const item = (args.input as { Item?: { pk: string; sk: string } }).Item;
    if (context.commandName === 'PutItemCommand' && item && beforePut && beforePut.times > 0) {
      beforePut.times--;
      await beforePut.hook(`${item.pk}|${item.sk}`);
    }
    return next(args);
  },
  { step: 'initialize', name: 'testBeforePrune' },
);
afterEach(() => {
  beforePut = undefined;
});

/** Another batch's ADD that does not prune (a plain UpdateItem, as addCoReadCounts makes it before pruning). */
const plainAdd = (clientId: string, guid: string, add: Record<string, number>) =>
  ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.covisits(clientId, guid),
      UpdateExpression: `ADD #cv :one, ${Object.keys(add).map((_, i) => `#c${i} :c${i}`).join(', ')}`,
      ExpressionAttributeNames: { '#cv': COVISIT_VERSION, ...Object.fromEntries(Object.keys(add).map((g, i) => [`#c${i}`, `n_${g}`])) },
      ExpressionAttributeValues: { ':one': 1, ...Object.fromEntries(Object.values(add).map((n, i) => [`:c${i}`, n])) },
    }),
  );

/** A co-visit item at the pruning threshold (x0 the strongest, 50), and its key as the middleware sees it. */
async function atThreshold() {
  const clientId = `prune-${randomUUID().slice(0, 8)}`;
  const now = Math.floor(Date.now() / 1000);
  const seeded: Array<[string, number]> = Array.from({ length: COVISIT_PRUNE_AT }, (_, i) => [`x${i}`, i === 0 ? 50 : 1 + (i % 7)]);
  for (let i = 0; i < seeded.length; i += 100) await addCoReadCounts(clientId, 'page', seeded.slice(i, i + 100), now);
  const k = keys.covisits(clientId, 'page');
  return { clientId, now, key: `${k.pk}|${k.sk}` };
}

/** Runs `write` (the nth time: n) right before each of the next `times` PutItems of the item `key`; returns how many ran. */
function raceBeforePut(key: string, times: number, write: (n: number) => Promise<unknown>): () => number {
  let raced = 0;
  beforePut = {
    times,
    hook: async (put) => {
      if (put !== key) return;
      raced++;
      await write(raced);
    },
  };
  return () => raced;
}

const counts = async (clientId: string, guid: string) => toCovisits((await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.covisits(clientId, guid), ConsistentRead: true }))).Item ?? {});

describe('co-visit items: pruning keeps what other batches add meanwhile', () => {
  it('an ADD that lands between the pruning batch\'s update and its rewrite is kept', async () => {
    const { clientId, now, key } = await atThreshold();
    expect(Object.keys(await counts(clientId, 'page'))).toHaveLength(COVISIT_PRUNE_AT);
    // The other batch: its reads of x0 and of a new article y land now (it prunes too: the item is past the threshold).
    const raced = raceBeforePut(key, 1, () => addCoReadCounts(clientId, 'page', [['x0', 1000], ['y', 500]], now));
    // One more entry: past the threshold, this batch prunes.
    await addCoReadCounts(clientId, 'page', [['new', 2]], now);
    expect(raced()).toBe(1);
    const after = await counts(clientId, 'page');
    expect(after.x0).toBe(1050);
    expect(after.y).toBe(500);
    expect(Object.keys(after).length).toBeLessThanOrEqual(COVISIT_CAP);
  });

  it('after a conflict it reads the item again and prunes it, keeping the other batch\'s counts', async () => {
    const { clientId, now, key } = await atThreshold();
    const raced = raceBeforePut(key, 1, () => plainAdd(clientId, 'page', { x0: 1000, y: 500 }));
    await addCoReadCounts(clientId, 'page', [['new', 2]], now);
    expect(raced()).toBe(1);
    const after = await counts(clientId, 'page');
    // The first rewrite was refused (the version moved); the second, from the item read again, pruned it.
    expect(Object.keys(after).length).toBe(COVISIT_CAP);
    expect(after.x0).toBe(1050);
    expect(after.y).toBe(500);
  });

  it('when both rewrites meet a concurrent ADD it leaves the pruning to the next update, and loses nothing', async () => {
    const { clientId, now, key } = await atThreshold();
    const raced = raceBeforePut(key, 2, (n) => plainAdd(clientId, 'page', { x0: 1000, [`y${n}`]: 500 }));
    await addCoReadCounts(clientId, 'page', [['new', 2]], now);
    expect(raced()).toBe(2);
    const after = await counts(clientId, 'page');
    // Not pruned: every count is there (the 150, the new one and both batches' y).
    expect(Object.keys(after)).toHaveLength(COVISIT_PRUNE_AT + 3);
    expect(after.x0).toBe(2050);
    expect([after.y1, after.y2, after.new]).toEqual([500, 500, 2]);
    // The next update prunes it.
    await addCoReadCounts(clientId, 'page', [['x1', 1]], now);
    expect(Object.keys(await counts(clientId, 'page')).length).toBe(COVISIT_CAP);
  });

  it('a storage fault on the rewrite fails the call and leaves every count in place (the next update prunes)', async () => {
    const { clientId, now, key } = await atThreshold();
    const raced = raceBeforePut(key, 1, () =>
      Promise.reject(Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400 } })),
    );
    await expect(addCoReadCounts(clientId, 'page', [['new', 2]], now)).rejects.toThrow(/capacity/);
    expect(raced()).toBe(1);
    const after = await counts(clientId, 'page');
    expect(Object.keys(after)).toHaveLength(COVISIT_PRUNE_AT + 1);
    expect([after.x0, after.new]).toEqual([50, 2]);
    await addCoReadCounts(clientId, 'page', [['x1', 1]], now);
    expect(Object.keys(await counts(clientId, 'page')).length).toBe(COVISIT_CAP);
  });
});
