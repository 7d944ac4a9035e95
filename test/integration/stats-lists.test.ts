/**
 * GET /v1/stats/lists/{list_id}/daily through the local gateway: one list driven through every path that
 * changes subscriptions (API single and batch, the bulk path, the deprecated list-less API, a CSV import,
 * an opt-in confirmation, a reader's one-click unsubscribe, an SES hard bounce, users/delete) over three
 * days (the change clock moved back, shared/subscribers/clock.ts), then each day's numbers and causes, and
 * today's subscribers equal to the count; the range and ownership errors.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { localMounts } from '../../infra/local/server.js';
import { createForm } from '../../shared/clients/clients.js';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { utcDay } from '../../shared/events/days.js';
import { createList } from '../../shared/lists/lists.js';
import { changeClock } from '../../shared/subscribers/clock.js';
import { snsEvent } from '../fixtures/ses/fixtures.js';
import { confirmationLink, mailsTo } from '../helpers/optin.js';
import { ingestSes, sesNotification } from '../helpers/ses.js';
import { newClient, request, useService, type ApiBody, type ErrorBody, type TestClient } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';
import { importByUrl, useLoopbackImports } from './imports-helpers.js';

const service = useService({ mounts: localMounts });
const files = useLoopbackImports();
const DAY_MS = 86_400_000;
const realClock = changeClock.now;
afterEach(() => (changeClock.now = realClock));

/** Runs `work` with subscriber changes dated `days` days ago (same time of day). */
async function daysAgo<T>(days: number, work: () => Promise<T>): Promise<T> {
  changeClock.now = () => Date.now() - days * DAY_MS;
  try {
    return await work();
  } finally {
    changeClock.now = realClock;
  }
}

const day = (ago: number) => utcDay(Date.now() - ago * DAY_MS);
const daily = (client: TestClient, listId: number, query: string) => request<ApiBody<'statsListsDaily'>>(`${service.url}/v1/stats/lists/${listId}/daily?${query}`, { token: client.token });
const post = (client: TestClient, listId: number, body: unknown) => request(`${service.url}/v1/newsletters/lists/${listId}/subscribers`, { method: 'POST', token: client.token, body });
const zeros = { subscribed: 0, unsubscribed: 0, causes: { READER: 0, PUBLISHER: 0, HARD_BOUNCE: 0 } };

/** Makes the list created `days` days ago (as if it had been; its creation day bounds the statistics). */
async function createdDaysAgo(client: TestClient, listId: number, days: number) {
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.list(client.username, listId),
      UpdateExpression: 'SET createdAt = :at',
      ExpressionAttributeValues: { ':at': new Date(Date.now() - days * DAY_MS).toISOString() },
    }),
  );
}

describe('GET /v1/stats/lists/{list_id}/daily', () => {
  it('counts every path on the day it happened, by cause, with each day-end count; today equals the count', async () => {
    const client = await newClient(service);
    const list = client.defaultListId;
    await createdDaysAgo(client, list, 2);
    const ok = (r: { status: number; text: string }) => expect(r.status, r.text).toBe(200);

    // Two days ago: API batch (3), single (1), the bulk path (120 lines), the deprecated list-less API (1): 125 subscribed.
    await daysAgo(2, async () => {
      ok(await post(client, list, [{ email: 'a1@example.com' }, { email: 'a2@example.com' }, { email: 'a3@example.com' }]));
      ok(await post(client, list, { email: 'a4@example.com' }));
      ok(await post(client, list, Array.from({ length: 120 }, (_, i) => ({ email: `b${i}@example.com` }))));
      ok(await request(`${service.url}/v1/newsletters/subscribers`, { method: 'POST', token: client.token, body: { email: 'a5@example.com' } }));
      // Not a subscription: a new address stored unsubscribed, and a line that changes only data.
      ok(await post(client, list, [{ email: 'never@example.com', subscribed: false }, { email: 'a1@example.com', data_city: 'Lyon' }]));
    });
    // Yesterday: an import (3 new subscribed, b0 unsubscribed: READER) and an API unsubscription with cause PUBLISHER.
    await daysAgo(1, async () => {
      const { file } = await importByUrl(service, files.server, client, list, 'email;subscribed\nc1@example.com;true\nc2@example.com;true\nc3@example.com;\nb0@example.com;false\n');
      expect(file).toMatchObject({ status: 'done' });
      ok(await post(client, list, { email: 'a2@example.com', subscribed: false, unsubscribed_cause: 'PUBLISHER' }));
    });
    // Today: an opt-in confirmed (1), a reader's one-click unsubscribe (READER), an SES hard bounce (HARD_BOUNCE), two deletions.
    const form = await createForm(client.username, { listIds: [list], global: false });
    ok(await request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { email: 'o1@example.com', form_key: form } }));
    ok(await request(confirmationLink((await mailsTo('o1@example.com'))[0])));
    const listing = await request<ApiBody<'subscribersList'>>(`${service.url}/v1/newsletters/lists/${list}/subscribers?search=a3@`, { token: client.token });
    const oneClick = await request(listing.body[0].unsubscribe_url, { method: 'POST', raw: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    ok(oneClick);
    expect(await ingestSes(snsEvent([sesNotification('bounce-permanent', client, 'a4@example.com')]))).toMatchObject({ unsubscribed: 1 });
    ok(await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: 'a5@example.com' }, { email: 'b1@example.com' }, { email: 'never@example.com' }] }));

    const reply = await daily(client, list, `from=${day(4)}&to=${day(0)}`);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual([
      { date: day(4), ...zeros, subscribers: 0 },
      { date: day(3), ...zeros, subscribers: 0 },
      { date: day(2), subscribed: 125, unsubscribed: 0, causes: { READER: 0, PUBLISHER: 0, HARD_BOUNCE: 0 }, subscribers: 125 },
      { date: day(1), subscribed: 3, unsubscribed: 2, causes: { READER: 1, PUBLISHER: 1, HARD_BOUNCE: 0 }, subscribers: 126 },
      { date: day(0), subscribed: 1, unsubscribed: 2, causes: { READER: 1, PUBLISHER: 0, HARD_BOUNCE: 1 }, subscribers: 123 },
    ]);
    const count = await request<ApiBody<'subscribersCount'>>(`${service.url}/v1/newsletters/lists/${list}/subscribers/count`, { token: client.token });
    expect(count.body.subscribed).toBe(123);
    expect(await recount(client.username, list)).toEqual(count.body);

    // A range ending before today: the same days, each day-end count from the days after it.
    const past = await daily(client, list, `from=${day(2)}&to=${day(1)}`);
    expect(past.body).toEqual(reply.body.slice(2, 4));
    // A day after today: nothing happened yet, the current count.
    const ahead = await daily(client, list, `from=${day(0)}&to=${utcDay(Date.now() + DAY_MS)}`);
    expect(ahead.body.map((d) => d.subscribers)).toEqual([123, 123]);
  });

  it.each([96, 97])('counts a %i-line POST (96: the largest transaction, its items, counter and day shards, outbox and lease check being DynamoDB\'s 100 items; 97: the bulk path)', async (lines) => {
    const client = await newClient(service);
    const reply = await post(client, client.defaultListId, Array.from({ length: lines }, (_, i) => ({ email: `t${i}@example.com` })));
    expect(reply.status, reply.text).toBe(200);
    expect((await daily(client, client.defaultListId, `from=${day(0)}&to=${day(0)}`)).body).toEqual([{ date: day(0), subscribed: lines, unsubscribed: 0, causes: { READER: 0, PUBLISHER: 0, HARD_BOUNCE: 0 }, subscribers: lines }]);
  });

  it('refuses bad ranges with a cause naming the field', async () => {
    const client = await newClient(service);
    const cases: Array<[string, string]> = [
      ['from=2026-03-02&to=2026-03-01', 'query: from must not be after to'],
      ['from=2025-01-01&to=2026-01-02', 'query: from and to must be at most 366 days apart (both included)'],
      ['from=2026-02-30&to=2026-03-01', 'query.from: from is not a calendar day'],
      ['from=2026-3-1&to=2026-03-01', 'query.from: from must be a day written YYYY-MM-DD (UTC)'],
      ['to=2026-03-01', 'query.from: is required'],
    ];
    for (const [query, cause] of cases) {
      const reply = await request<ErrorBody>(`${service.url}/v1/stats/lists/${client.defaultListId}/daily?${query}`, { token: client.token });
      // The first problem, named by its field (a malformed day also fails the checks after it: "(and n more problem(s))").
      expect([query, reply.status, reply.body.status, reply.body.cause.startsWith(cause)]).toEqual([query, 400, 400, true]);
    }
    // 366 days both included is the most.
    expect((await daily(client, client.defaultListId, 'from=2025-01-01&to=2026-01-01')).body).toHaveLength(366);
  });

  it("answers 404 for another client's list and an unknown one, 401 without a token", async () => {
    const a = await newClient(service);
    const b = await newClient(service);
    const theirs = await createList(b.username, 'Theirs');
    await request(`${service.url}/v1/newsletters/lists/${theirs.id}/subscribers`, { method: 'POST', token: b.token, body: { email: 'x@example.com' } });
    const range = `from=${day(1)}&to=${day(0)}`;
    expect((await daily(b, theirs.id, range)).status).toBe(200);
    expect((await request(`${service.url}/v1/stats/lists/${theirs.id}/daily?${range}`, { token: a.token })).body).toEqual({ status: 404, cause: `Unknown list ${theirs.id}` });
    expect((await request(`${service.url}/v1/stats/lists/999/daily?${range}`, { token: a.token })).body).toEqual({ status: 404, cause: 'Unknown list 999' });
    expect((await request(`${service.url}/v1/stats/lists/${a.defaultListId}/daily?${range}`)).status).toBe(401);
  });
});
