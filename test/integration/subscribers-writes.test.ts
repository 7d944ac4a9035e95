/**
 * The subscriber write path without a lock (shared/subscribers/writer.ts): each item is written conditioned on the
 * version read, a line that loses a race is read and applied again, and the counts the table stream derives stay
 * equal to a recount while writers of one list run side by side.
 */
import { BatchExecuteStatementCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ddb } from '../../shared/db/client.js';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { isSubscriberBatch } from '../helpers/kill.js';
import { captureOutput } from '../helpers/logs.js';
import { newClient, request, useService, type ApiBody, type ErrorBody } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';

const service = useService();
afterEach(() => vi.restoreAllMocks());

const subscribersUrl = (client: { defaultListId: number }) => `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
const counts = async (client: { defaultListId: number; token: string }) => (await request(`${subscribersUrl(client)}/count`, { token: client.token })).body;
const post = (client: { defaultListId: number; token: string }, body: unknown) => request<ApiBody<'subscribersPost'>>(subscribersUrl(client), { method: 'POST', token: client.token, body });

/** Holds the writer's statement calls of subscriber items back until the returned `release` is called. */
function holdSubscriberBatches() {
  const send = ddb.send.bind(ddb);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
  vi.spyOn(ddb, 'send').mockImplementation((async (command: unknown) => {
    if (isSubscriberBatch(command)) {
      held();
      await released;
    }
    return send(command as never);
  }) as typeof ddb.send);
  return { holding, release };
}

describe('subscriber writes side by side', () => {
  it('keeps the counters exact while single-line writes, bounces and deletions of the same addresses run against a large write', async () => {
    const client = await newClient(service);
    const address = (i: number) => `bulk${i % 1500}@example.com`;
    await post(client, Array.from({ length: 1500 }, (_, i) => ({ email: address(i) })));
    const lines = Array.from({ length: 3000 }, (_, i) => ({
      line: i + 1,
      email: address(i * 7),
      subscribed: i % 3 === 0 ? false : i % 3 === 1 ? true : undefined,
      unsubscribedCause: 'PUBLISHER' as const,
      data: { data_round: i },
    }));
    const bulk = applySubscribers(client.username, client.defaultListId, lines);
    const singles = Array.from({ length: 30 }, (_, k) => post(client, [{ email: address(k * 11), subscribed: k % 2 === 0 }, { email: `new${k}@example.com` }]));
    const bounces = applySubscribers(client.username, client.defaultListId, [1, 2, 3].map((i) => ({ line: i, email: address(i * 7), subscribed: false, unsubscribedCause: 'HARD_BOUNCE' as const })));
    const deletion = request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: address(14) }, { email: address(21) }] });
    const [bulkReport, singleReplies, , deleted] = await Promise.all([bulk, Promise.all(singles), bounces, deletion]);
    expect(bulkReport.unique_emails_count).toBe(1500);
    expect(singleReplies.map((r) => r.status)).toEqual(singleReplies.map(() => 200));
    expect(deleted.status).toBe(200);
    const truth = await recount(client.username, client.defaultListId);
    expect(await counts(client)).toEqual(truth);
    // The two deleted addresses come back when the large write's lines for them land after the deletion.
    expect(truth.subscribed + truth.unsubscribed).toBeGreaterThanOrEqual(1500 - 2 + 30);
    expect(truth.subscribed + truth.unsubscribed).toBeLessThanOrEqual(1500 + 30);
    expect(truth.cause.HARD_BOUNCE + truth.cause.PUBLISHER).toBeGreaterThan(0);
  });

  it('applies every line of two concurrent batches over the same addresses: each address is created once across the two reports, count = recount', async () => {
    const client = await newClient(service);
    const body = (round: number) => Array.from({ length: 1200 }, (_, i) => ({ email: `both${i}@example.com`, data_round: round, subscribed: (i + round) % 5 !== 0 }));
    const [first, second] = await Promise.all([post(client, body(1)), post(client, body(2))]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body.report.nb_created + second.body.report.nb_created).toBe(1200);
    expect(first.body.report.unique_emails_count + second.body.report.unique_emails_count).toBe(2400);
    const truth = await recount(client.username, client.defaultListId);
    expect(truth.subscribed + truth.unsubscribed).toBe(1200);
    expect(await counts(client)).toEqual(truth);
  });

  it('answers a single write to a list at once while a large write to it is held mid-way (no lock), and both apply', async () => {
    const client = await newClient(service);
    const { holding, release } = holdSubscriberBatches();
    const large = applySubscribers(client.username, client.defaultListId, Array.from({ length: 500 }, (_, i) => ({ line: i + 1, email: `held${i}@example.com` })));
    await holding;
    vi.restoreAllMocks();
    // The large write stays held until release(): a lock would keep this reply from ever coming.
    const reply = await post(client, [{ email: 'held3@example.com', data_city: 'Lyon' }, { email: 'alone@example.com' }]);
    expect(reply.status).toBe(200);
    release();
    const report = await large;
    // held3 was written by the small write first: the large write's line for it lost its race, was read again and applied on top.
    expect(report.nb_created + reply.body.report.nb_created).toBe(501);
    const truth = await recount(client.username, client.defaultListId);
    expect(truth.subscribed).toBe(501);
    expect(await counts(client)).toEqual(truth);
  });

  it('re-reads and applies again a line whose item changed between its read and its write', async () => {
    const client = await newClient(service);
    await post(client, { email: 'race@example.com', data_a: 1 });
    const send = ddb.send.bind(ddb);
    let raced = false;
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    const spy = vi.spyOn(ddb, 'send').mockImplementation((async (command: unknown) => {
      if (!raced && isSubscriberBatch(command)) {
        raced = true;
        // Another writer unsubscribes the address after this write read it.
        spy.mockRestore();
        await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'race@example.com', subscribed: false, unsubscribedCause: 'PUBLISHER' }]);
      }
      return send(command as never);
    }) as typeof ddb.send);
    const reply = await post(client, { email: 'race@example.com', data_b: 2 });
    expect(raced).toBe(true);
    expect(reply.body.report).toMatchObject({ nb_created: 0, nb_subscribed: 0, nb_data_changed: 1 });
    const listed = await request<ApiBody<'subscribersList'>>(`${subscribersUrl(client)}?count=10`, { token: client.token });
    expect(listed.body[0]).toMatchObject({ email: 'race@example.com', subscribed: false });
    expect(await counts(client)).toEqual(await recount(client.username, client.defaultListId));
  });

  it('retries statement calls that fail with a fault a retry cures; when they keep failing, answers a 503 that counts exactly the lines applied, and the retry completes', async () => {
    const client = await newClient(service);
    const body = Array.from({ length: 1000 }, (_, i) => ({ email: `landed${i}@example.com` }));
    const send = ddb.send.bind(ddb);
    let calls = 0;
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      // From the 20th call on, every call of subscriber statements is throttled past the SDK's retries.
      if (command instanceof BatchExecuteStatementCommand && isSubscriberBatch(command) && ++calls >= 20) {
        return Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }));
      }
      return send(command as never);
    }) as typeof ddb.send);
    const output = captureOutput();
    const reply = await request<ErrorBody>(subscribersUrl(client), { method: 'POST', token: client.token, body });
    output.restore();
    vi.restoreAllMocks();
    expect(reply.status).toBe(503);
    const applied = Number(/after (\d+) of 1000 subscribers were applied/.exec(reply.body.cause)?.[1]);
    const truth = await recount(client.username, client.defaultListId);
    expect(truth.subscribed).toBe(applied);
    expect(await counts(client)).toEqual(truth);
    expect(applied).toBeLessThan(1000);

    const retry = await post(client, body);
    expect(retry.status).toBe(200);
    expect(retry.body.report.nb_created).toBe(1000 - applied);
    expect(await counts(client)).toEqual({ ...truth, subscribed: 1000 });
  });
});
