/**
 * The fresh list and a late batch of page views (redelivered, redriven or finishing after newer ones): entries of
 * articles published after the batch's views must not be pruned as dated ahead, since only a first view adds them.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { toFresh } from '../../shared/recos/dynamo-items.js';
import { DynamoStore } from '../../shared/recos/dynamo-store.js';
import { MAX_FRESHNESS_HOURS } from '../../shared/recos/settings.js';
import { useService } from '../helpers/service.js';

useService();

const freshGuids = async (clientId: string) =>
  toFresh((await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.freshArticles(clientId), ConsistentRead: true }))).Item ?? {})
    .map((e) => e.guid)
    .sort();

describe('fresh list: a batch of page views applied late', () => {
  it('keeps the entries of articles published after its views, and still prunes what is really out of the window', async () => {
    const clientId = `fresh-${randomUUID().slice(0, 8)}`;
    const store = new DynamoStore();
    const now = Math.floor(Date.now() / 1000);
    // A current batch lists an article published a minute ago.
    await store.addFresh(clientId, [{ guid: 'today', published: now - 60 }], now);
    // A batch of views from three hours ago, applied now, lists its own first-viewed article; with it comes an entry
    // out of the 30-day window (from an old catalogue write), so this batch prunes.
    const late = now - 3 * 3600;
    await store.addFresh(clientId, [{ guid: 'three-hours-ago', published: late - 600 }], late);
    await store.addFresh(clientId, [{ guid: 'too-old', published: late - MAX_FRESHNESS_HOURS * 3600 - 60 }], late);
    expect(await freshGuids(clientId)).toEqual(['three-hours-ago', 'today']);
  });

  it('still prunes an entry dated more than an hour ahead of this moment', async () => {
    const clientId = `fresh-${randomUUID().slice(0, 8)}`;
    const store = new DynamoStore();
    const now = Math.floor(Date.now() / 1000);
    await store.addFresh(clientId, [{ guid: 'now', published: now - 60 }], now);
    await store.addFresh(clientId, [{ guid: 'next-week', published: now + 7 * 86_400 }], now);
    expect(await freshGuids(clientId)).toEqual(['now']);
  });
});
