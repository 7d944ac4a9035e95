/**
 * Nothing lost, nothing wrong after a crash: a writer killed at random points
 * (through its clients) leaves items whose counts and events the table stream
 * derives with no new write (count = recount, one event per applied line),
 * and re-sending the whole request completes it exactly once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createForm } from '../../shared/clients/clients.js';
import { queryAll, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { createList } from '../../shared/lists/lists.js';
import { applySubscribers, deleteUsers } from '../../shared/subscribers/service.js';
import { killAt, seeded } from '../helpers/kill.js';
import { newClient, request, useService, type ApiBody, type ErrorBody } from '../helpers/service.js';
import { rawEventObjects, recount, countSubscribers } from '../helpers/subscribers.js';

const service = useService();
afterEach(() => vi.restoreAllMocks());

const subscribedEmails = async (clientId: string, listId: number) =>
  (
    await queryAll<{ email: string; subscribed: boolean }>({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.subscribersPartition(clientId, listId) },
      ConsistentRead: true,
    })
  )
    .filter((i) => i.subscribed)
    .map((i) => i.email)
    .sort();
const eventEmails = async (clientId: string) => (await rawEventObjects(clientId, 'nl_subscribe')).flat().map((e) => String(e.email)).sort();

/** The list's day shards summed over all days (shared/subscribers/daily.ts). */
async function daySums(clientId: string, listId: number) {
  const items = await queryAll<Record<string, number>>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.listDaysPartition(clientId, listId) },
    ConsistentRead: true,
  });
  const sum = (name: string) => items.reduce((n, i) => n + Number(i[name] ?? 0), 0);
  return { subscribed: sum('subscribed'), unsubscribed: sum('unsubscribed'), deleted: sum('deleted'), net: sum('net') };
}

async function expectExact(clientId: string, listId: number) {
  const truth = await recount(clientId, listId);
  const counted = await countSubscribers(clientId, listId);
  expect(counted).toEqual(truth);
  // One nl_subscribe per subscribed address: none missing, none doubled.
  const events = await eventEmails(clientId);
  expect(events).toEqual(await subscribedEmails(clientId, listId));
  // The statistics' days moved with the counters: exactly once each (net = the count, one subscription per event).
  expect(await daySums(clientId, listId)).toEqual({ subscribed: events.length, unsubscribed: 0, deleted: 0, net: counted.subscribed });
}

describe('a writer killed at random points', () => {
  // Calls of a whole write (DynamoDB and S3), measured once per shape so the kill points cover all of it.
  const callsOf = async (lines: number) => {
    const client = await newClient(service);
    const meter = killAt(() => 'pass');
    await applySubscribers(
      client.username,
      client.defaultListId,
      Array.from({ length: lines }, (_, i) => ({ line: i + 1, email: `m${i}@example.com` })),
    );
    meter.restore();
    return meter.calls;
  };

  it.each([
    ['large', 1000, 20261124],
    ['small', 60, 31],
  ] as const)('%s write (%d lines), seed %d: once the stream has drained, events = applied lines and count = recount; the re-sent request completes once', async (_kind, size, seed) => {
    const total = await callsOf(size);
    const random = seeded(seed);
    const points = Array.from({ length: 4 }, () => 1 + Math.floor(random() * total));
    for (const point of points) {
      const client = await newClient(service);
      const { username: clientId, defaultListId: listId } = client;
      const lines = Array.from({ length: size }, (_, i) => ({ line: i + 1, email: `k${point}-${i}@example.com` }));
      const kill = killAt((_command, call) => (call >= point ? 'kill' : 'pass'));
      await applySubscribers(clientId, listId, lines).catch(() => undefined);
      kill.restore();
      // No new write: the stream derives the counts and events of what landed.
      await expectExact(clientId, listId);
      // "Re-send the whole request" stays true: it completes, exactly once.
      const report = await applySubscribers(clientId, listId, lines);
      expect(report.unique_emails_count).toBe(size);
      expect(await recount(clientId, listId)).toMatchObject({ subscribed: size });
      await expectExact(clientId, listId);
    }
  }, 240_000);

  it('users/delete (12 addresses on 3 lists) killed before each of its calls: once the stream has drained, count = recount and one nl_delete per subscription removed; the re-sent request completes once', async () => {
    const shape = async (tag: string) => {
      const client = await newClient(service);
      const listIds = [client.defaultListId, (await createList(client.username, 'Second')).id, (await createList(client.username, 'Third')).id];
      const emails = Array.from({ length: 12 }, (_, i) => `d${tag}-${i}@example.com`);
      for (const listId of listIds) await applySubscribers(client.username, listId, emails.map((email, i) => ({ line: i + 1, email })));
      return { clientId: client.username, listIds, emails };
    };
    const pairs = async (clientId: string, listIds: number[]) => (await Promise.all(listIds.map(async (l) => (await subscribedEmails(clientId, l)).map((e) => `${l}:${e}`)))).flat().sort();
    const deletedPairs = async (clientId: string) => (await rawEventObjects(clientId, 'nl_delete')).flat().map((e) => `${String(e.email_list_id)}:${String(e.email)}`).sort();
    const measured = await shape('m');
    const meter = killAt(() => 'pass');
    await deleteUsers(measured.clientId, measured.emails.map((email) => ({ email })));
    meter.restore();
    // Killed before each of its calls in turn (few enough to try them all).
    for (let point = 1; point <= meter.calls; point++) {
      const { clientId, listIds, emails } = await shape(String(point));
      const before = await pairs(clientId, listIds);
      const kill = killAt((_command, call) => (call >= point ? 'kill' : 'pass'));
      await deleteUsers(clientId, emails.map((email) => ({ email }))).catch(() => undefined);
      kill.restore();
      // Every subscription removed has its one nl_delete (none for one still there, none twice); counts are exact.
      const left = await pairs(clientId, listIds);
      expect(await deletedPairs(clientId)).toEqual(before.filter((p) => !left.includes(p)));
      for (const listId of listIds) {
        expect(await countSubscribers(clientId, listId)).toEqual(await recount(clientId, listId));
        const removed = before.filter((p) => p.startsWith(`${listId}:`) && !left.includes(p)).length;
        expect(await daySums(clientId, listId)).toEqual({ subscribed: 12, unsubscribed: 0, deleted: removed, net: 12 - removed });
      }
      // Re-sent, it completes: nothing left, every subscription's nl_delete exactly once.
      await deleteUsers(clientId, emails.map((email) => ({ email })));
      expect(await pairs(clientId, listIds)).toEqual([]);
      expect(await deletedPairs(clientId)).toEqual(before);
      for (const listId of listIds) {
        expect(await countSubscribers(clientId, listId)).toEqual(await recount(clientId, listId));
        expect(await daySums(clientId, listId)).toEqual({ subscribed: 12, unsubscribed: 0, deleted: 12, net: 0 });
      }
    }
  }, 240_000);

});

describe('a request near its time budget', () => {
  it('stops starting chunks and answers 503 with the applied count; re-sending the whole request completes it', async () => {
    const client = await newClient(service);
    const url = `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
    const body = Array.from({ length: 8000 }, (_, i) => ({ email: `budget${i}@example.com` }));
    // As the first chunks write, 23 s "pass" (a slow table): the request's 25 s budget leaves no room for another chunk.
    const realNow = Date.now;
    let skew = 0;
    let batches = 0;
    const { ddb } = await import('../../shared/db/client.js');
    const send = ddb.send.bind(ddb);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skew);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      if ((command as object).constructor.name === 'BatchExecuteStatementCommand' && ++batches === 1) skew = 23_000;
      return send(command as never);
    }) as typeof ddb.send);
    const reply = await request<ErrorBody>(url, { method: 'POST', token: client.token, body });
    vi.restoreAllMocks();
    expect(reply.status).toBe(503);
    const applied = Number(/ran out of time after (\d+) of 8000 subscribers were applied; the rest were not\. Retry the request/.exec(reply.body.cause)?.[1]);
    expect(applied).toBeGreaterThan(0);
    expect(applied).toBeLessThan(8000);
    expect(reply.headers.get('retry-after')).toBe('1');
    const truth = await recount(client.username, client.defaultListId);
    expect(truth.subscribed).toBe(applied);
    await expectExact(client.username, client.defaultListId);
    const again = await request<ApiBody<'subscribersPost'>>(url, { method: 'POST', token: client.token, body });
    expect(again.status).toBe(200);
    expect(again.body.report.nb_created).toBe(8000 - applied);
    await expectExact(client.username, client.defaultListId);
  });
});

describe('small writes right after a writer died', () => {
  it.each(['users/delete', 'the opt-in form’s update'] as const)('%s answers 200 (the dead writer left no lock behind); once the stream has drained, count = recount and every event is there', async (kind) => {
    const client = await newClient(service);
    const { username: clientId, defaultListId: listId } = client;
    let batches = 0;
    const kill = killAt((command) => (command && command.constructor.name === 'BatchExecuteStatementCommand' && ++batches > 12 ? 'kill' : 'pass'));
    await expect(applySubscribers(clientId, listId, Array.from({ length: 600 }, (_, i) => ({ line: i + 1, email: `dead${i}@example.com` })))).rejects.toThrow();
    kill.restore();
    const landed = await subscribedEmails(clientId, listId);
    expect(landed.length).toBeGreaterThan(0);
    expect(landed.length).toBeLessThan(600);
    const reply =
      kind === 'users/delete'
        ? await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: landed[0] }] })
        : await request(`${service.url}/v1/subscribe/${client.trackingKey}`, {
            method: 'POST',
            raw: new URLSearchParams({ email: landed[0], form_key: await createForm(clientId, { listIds: [listId], global: false }), update: 'true', data_plan: 'paid' }).toString(),
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          });
    expect(reply.status, reply.text).toBe(200);
    const truth = await recount(clientId, listId);
    expect(truth.subscribed).toBe(kind === 'users/delete' ? landed.length - 1 : landed.length);
    expect(await countSubscribers(clientId, listId)).toEqual(truth);
    expect(await eventEmails(clientId)).toEqual(landed);
    expect((await daySums(clientId, listId)).net).toBe(truth.subscribed);
  });
});
