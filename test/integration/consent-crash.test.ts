/**
 * A consent record is part of the subscriber item whose status it records:
 * whatever point a writer dies at (bulk or transactional, a BatchWriteItem
 * cut part-way included), after the sweeper every item carries exactly one
 * record per change of status it went through, the last one matching its
 * status, and every unsubscribed item has its one nl_unsubscribe event.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureTable } from '../../infra/local/services.js';
import { queryAll, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { consentRecords } from '../../shared/readers/consent.js';
import { leaseMs } from '../../shared/subscribers/list-writer.js';
import { sweepListWriters } from '../../shared/subscribers/index.js';
import type { SubscriberItem } from '../../shared/subscribers/store.js';
import { applySubscribers, countSubscribers } from '../../shared/subscribers/service.js';
import { isSubscriberBatch, killAt, seeded } from '../helpers/kill.js';
import { newClient, useService } from '../helpers/service.js';
import { rawEventObjects, recount } from '../helpers/subscribers.js';

// Sweeps on a clock moved past the lease: a table of its own, as subscribers-crash.test.ts (set before any table access).
process.env.TABLE_NAME = `consent-${randomUUID().slice(0, 8)}`;
beforeAll(() => ensureTable(process.env.AWS_ENDPOINT_URL_DYNAMODB!, process.env.TABLE_NAME!));

const service = useService();
afterEach(() => vi.restoreAllMocks());

async function sweepLater(ms: number) {
  const realNow = Date.now;
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
  try {
    return await sweepListWriters(Date.now());
  } finally {
    vi.mocked(Date.now).mockRestore();
  }
}

const items = (clientId: string, listId: number) =>
  queryAll<SubscriberItem>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscribersPartition(clientId, listId) },
    ConsistentRead: true,
  });

describe('consent records when a writer dies', () => {
  it.each([
    ['bulk', 400, 20261125],
    ['transactional', 60, 24],
  ] as const)('%s unsubscribe of %d members, seed %d: each item has the records of the changes it went through, no more, no less', async (kind, size, seed) => {
    const random = seeded(seed);
    let partial = 0;
    let appliedThenKilled = 0;
    // A bulk write: three random calls of its ~30; a transaction's few calls: each of them.
    const points = kind === 'bulk' ? Array.from({ length: 3 }, () => 1 + Math.floor(random() * 24)) : [1, 2, 3, 4, 5, 6];
    for (const [round, point] of points.entries()) {
      const client = await newClient(service);
      const { username: clientId, defaultListId: listId } = client;
      const emails = Array.from({ length: size }, (_, i) => `c${round}-${i}@example.com`);
      await applySubscribers(clientId, listId, emails.map((email, i) => ({ line: i + 1, email })));
      // Die at that call of the unsubscribing write; a subscriber BatchWriteItem may land part of its items.
      const kill = killAt((command, call) => (call < point ? 'pass' : isSubscriberBatch(command) ? { items: Math.floor(random() * 25) } : 'kill'));
      await applySubscribers(
        clientId,
        listId,
        emails.map((email, i) => ({ line: i + 1, email, subscribed: false, unsubscribedCause: 'READER' as const, consent: { source: 'unsubscribe_link' as const, ip: '192.0.2.7' } })),
      ).catch(() => undefined);
      kill.restore();
      const killed = kill.killed;
      await sweepLater(leaseMs() + 1_000);

      const stored = await items(clientId, listId);
      expect(stored).toHaveLength(size);
      for (const item of stored) {
        const expected = item.subscribed ? [[true, 'api']] : [[true, 'api'], [false, 'unsubscribe_link']];
        expect(consentRecords(item).map((c) => [c.subscribed, c.source]), item.email).toEqual(expected);
        expect(consentRecords(item).at(-1)!.subscribed).toBe(item.subscribed);
      }
      const unsubscribed = stored.filter((i) => !i.subscribed).map((i) => i.email).sort();
      if (unsubscribed.length > 0 && unsubscribed.length < size) partial++;
      if (killed && unsubscribed.length === size) appliedThenKilled++;
      const events = (await rawEventObjects(clientId, 'nl_unsubscribe')).flat().map((e) => String(e.email)).sort();
      expect(events).toEqual(unsubscribed);
      expect(await countSubscribers(clientId, listId)).toEqual(await recount(clientId, listId));
    }
    // The kill points do cut writes (else this file would prove nothing): a bulk write part-way; a transaction
    // (atomic) after it applied, before its events were stored (the sweeper stores them from the outbox).
    expect(kind === 'bulk' ? partial : appliedThenKilled).toBeGreaterThan(0);
  }, 180_000);
});
