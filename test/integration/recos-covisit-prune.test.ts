/**
 * A co-visit item past COVISIT_PRUNE_AT is rewritten with its COVISIT_CAP
 * strongest counts. Regression: the rewrite was an unconditional PutItem, and
 * a batch that ADDed counts to the same item between the pruning batch's
 * UpdateItem and its PutItem lost them (a consumer that runs 10 batches at
 * once, as it does behind a burst, prunes the popular articles' items all the
 * time). The race is forced here: a middleware on the service's client runs
 * the other batch's ADD just before the pruning PutItem is sent.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { addCoReadCounts, toCovisits } from '../../shared/recos/dynamo-items.js';
import { COVISIT_CAP, COVISIT_PRUNE_AT } from '../../shared/recos/limits.js';
import { useService } from '../helpers/service.js';

useService();

let beforePut: ((key: string) => Promise<void>) | undefined;
ddb.middlewareStack.add(
  (next, context) => async (args) => {
    const item = (args.input as { Item?: { pk: string; sk: string } }).Item;
    if (context.commandName === 'PutItemCommand' && item && beforePut) {
      const hook = beforePut;
      beforePut = undefined;
      await hook(`${item.pk}|${item.sk}`);
    }
    return next(args);
  },
  { step: 'initialize', name: 'testBeforePrune' },
);
afterEach(() => {
  beforePut = undefined;
});

const counts = async (clientId: string, guid: string) => toCovisits((await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.covisits(clientId, guid), ConsistentRead: true }))).Item ?? {});

describe('co-visit items: pruning keeps what other batches add meanwhile', () => {
  it('an ADD that lands between the pruning batch\'s update and its rewrite is kept', async () => {
    const clientId = `prune-${randomUUID().slice(0, 8)}`;
    const now = Math.floor(Date.now() / 1000);
    // COVISIT_PRUNE_AT entries: at the threshold, not past it (no pruning yet). x0 is the strongest.
    const seeded: Array<[string, number]> = Array.from({ length: COVISIT_PRUNE_AT }, (_, i) => [`x${i}`, i === 0 ? 50 : 1 + (i % 7)]);
    for (let i = 0; i < seeded.length; i += 100) await addCoReadCounts(clientId, 'page', seeded.slice(i, i + 100), now);
    expect(Object.keys(await counts(clientId, 'page'))).toHaveLength(COVISIT_PRUNE_AT);

    const target = keys.covisits(clientId, 'page');
    let raced = false;
    beforePut = async (key) => {
      if (key !== `${target.pk}|${target.sk}`) return;
      raced = true;
      // The other batch: its reads of x0 and of a new article y land now.
      await addCoReadCounts(clientId, 'page', [['x0', 1000], ['y', 500]], now);
    };
    // One more entry: past the threshold, this batch prunes.
    await addCoReadCounts(clientId, 'page', [['new', 2]], now);

    expect(raced).toBe(true);
    const after = await counts(clientId, 'page');
    expect(after.x0).toBe(1050);
    expect(after.y).toBe(500);
    expect(Object.keys(after).length).toBeLessThanOrEqual(COVISIT_CAP);
  });
});
