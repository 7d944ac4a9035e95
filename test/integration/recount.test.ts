/**
 * The recount (shared/subscribers/recount.ts) on DynamoDB Local: it reads a list in pages with a `Limit` (without
 * one, DynamoDB Local evaluates the whole rest of the partition for every page); and the backfill that sets a
 * list's counters to it when a table is switched to the stream.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importRawItems } from '../../bench/small-writes.js';
import { recountList, resetCounters } from '../../shared/subscribers/recount.js';
import { readCounters } from '../../shared/subscribers/store.js';
import { keys } from '../../shared/db/keys.js';
import { streamDrained } from '../helpers/subscribers.js';
import { createClient } from '../../shared/clients/clients.js';
import { batchWrite, ddb, tableName } from '../../shared/db/client.js';
import { PutCommand } from '@aws-sdk/lib-dynamodb';

const queries: Array<{ limit?: number }> = [];
ddb.middlewareStack.add(
  (next, context) => async (args) => {
    if (context.commandName === 'QueryCommand') queries.push({ limit: (args.input as { Limit?: number }).Limit });
    return next(args);
  },
  { step: 'initialize', name: 'recountQueries' },
);

describe('recountList', () => {
  it('counts a list of 2,500 in pages of at most 1,000 items', async () => {
    const { client } = await createClient(`t-${randomUUID().slice(0, 12)}`);
    const rows = Array.from({ length: 2_500 }, (_, i) => [`r${i}@recount.example`, i % 5 === 0 ? 'false' : 'true']);
    const items = await importRawItems(client.id, client.defaultListId, 1, ['email', 'subscribed'], rows);
    await batchWrite(items.map((Item) => ({ PutRequest: { Item } })));
    queries.length = 0;
    const totals = await recountList(client.id, client.defaultListId);
    const cause = { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 };
    for (const item of items.filter((i) => !i.subscribed)) cause[(item.unsubscribedCause as keyof typeof cause | undefined) ?? 'READER']++;
    expect(cause.HARD_BOUNCE + cause.PUBLISHER + cause.READER).toBe(500);
    expect(totals).toEqual({ subscribed: 2_000, unsubscribed: 500, cause });
    expect(queries.length).toBeGreaterThanOrEqual(3);
    for (const query of queries) expect(query.limit).toBeLessThanOrEqual(1_000);
  });

  it('resetCounters sets counters that disagree with the items (shards written before the stream) to the recount', async () => {
    const { client } = await createClient(`t-${randomUUID().slice(0, 12)}`);
    const rows = Array.from({ length: 300 }, (_, i) => [`b${i}@recount.example`, i % 3 === 0 ? 'false' : 'true']);
    await batchWrite((await importRawItems(client.id, client.defaultListId, 1, ['email', 'subscribed'], rows)).map((Item) => ({ PutRequest: { Item } })));
    await streamDrained();
    // A shard left by an earlier writer that counted what the stream counts again.
    await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...keys.counterShard(client.id, client.defaultListId, 7), subscribed: 40, unsubscribed: 3, READER: 3 } }));
    expect((await readCounters(client.id, client.defaultListId)).subscribed).toBe(240);
    const totals = await resetCounters(client.id, client.defaultListId);
    expect(totals).toMatchObject({ subscribed: 200, unsubscribed: 100 });
    expect(await readCounters(client.id, client.defaultListId)).toEqual({ subscribed: 200, unsubscribed: 100, ...totals.cause });
  });
});
