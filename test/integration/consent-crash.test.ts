/**
 * A consent record is part of the subscriber item whose status it records:
 * whatever point a writer dies at (a large or a small write, a batch of
 * statements cut part-way included), once the stream has drained every item carries exactly one
 * record per change of status it went through, the last one matching its
 * status, and every unsubscribed item has its one nl_unsubscribe event.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { queryAll, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { consentRecords } from '../../shared/readers/consent.js';
import type { SubscriberItem } from '../../shared/subscribers/store.js';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { isSubscriberBatch, killAt, seeded } from '../helpers/kill.js';
import { newClient, useService } from '../helpers/service.js';
import { rawEventObjects, recount, countSubscribers } from '../helpers/subscribers.js';

const service = useService();
afterEach(() => vi.restoreAllMocks());

const items = (clientId: string, listId: number) =>
  queryAll<SubscriberItem>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscribersPartition(clientId, listId) },
    ConsistentRead: true,
  });

describe('consent records when a writer dies', () => {
  it.each([
    ['large', 400, 20261125],
    ['small', 60, 24],
  ] as const)('%s unsubscribe of %d members, seed %d: each item has the records of the changes it went through, no more, no less', async (kind, size, seed) => {
    const random = seeded(seed);
    let partial = 0;
    let appliedThenKilled = 0;
    // A large write: three random calls of its ~30; a small write's few calls: each of them.
    const points = kind === 'large' ? Array.from({ length: 3 }, () => 1 + Math.floor(random() * 24)) : [1, 2, 3, 4, 5, 6];
    for (const [round, point] of points.entries()) {
      const client = await newClient(service);
      const { username: clientId, defaultListId: listId } = client;
      const emails = Array.from({ length: size }, (_, i) => `c${round}-${i}@example.com`);
      await applySubscribers(clientId, listId, emails.map((email, i) => ({ line: i + 1, email })));
      // Die at that call of the unsubscribing write; a batch of subscriber statements may land part of its items.
      const kill = killAt((command, call) => (call < point ? 'pass' : isSubscriberBatch(command) ? { items: Math.floor(random() * 25) } : 'kill'));
      await applySubscribers(
        clientId,
        listId,
        emails.map((email, i) => ({ line: i + 1, email, subscribed: false, unsubscribedCause: 'READER' as const, consent: { source: 'unsubscribe_link' as const, ip: '192.0.2.7' } })),
      ).catch(() => undefined);
      kill.restore();
      const killed = kill.killed;

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
    // The kill points do cut writes (else this file would prove nothing): a large write part-way; a small write after
    // part of it applied (a cut batch) or all of it (killed at its answer's last call).
    expect(kind === 'large' ? partial : partial + appliedThenKilled).toBeGreaterThan(0);
  }, 180_000);
});
