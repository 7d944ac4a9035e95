/**
 * The recount the tests and benchmarks check counters against (bench/recount.ts), on DynamoDB Local: it reads a
 * list in pages with a `Limit`. DynamoDB Local evaluates a Query without one over the whole rest of the partition
 * for every page, so an unlimited recount of a 202,000-member list took minutes and stalled
 * `npm run bench:subscribers` (2026-11-28, docs/benchmarks.md).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importRawItems } from '../../bench/small-writes.js';
import { recountList } from '../../bench/recount.js';
import { createClient } from '../../shared/clients/clients.js';
import { batchWrite, ddb } from '../../shared/db/client.js';

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
});
