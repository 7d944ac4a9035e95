/**
 * Bulk subscriber writes (more than one transaction's worth of lines) go
 * with BatchWriteItem under the list's writer lease (shared/subscribers/list-writer.ts):
 * counters stay exact against concurrent transactional writers, a failed
 * BatchWriteItem and a writer that died mid-chunk.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ddb, queryAll, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { leaseMs } from '../../shared/subscribers/list-writer.js';
import { isSubscriberBatch, killAt } from '../helpers/kill.js';
import { captureOutput } from '../helpers/logs.js';
import { newClient, request, useService, type ApiBody, type ErrorBody } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';

const service = useService();
afterEach(() => vi.restoreAllMocks());

const subscribersUrl = (client: { defaultListId: number }) => `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
const counts = async (client: { defaultListId: number; token: string }) => (await request(`${subscribersUrl(client)}/count`, { token: client.token })).body;
const writerItems = (clientId: string, listId: number) =>
  queryAll<{ sk: string; owner?: string }>({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.listWriterPartition(clientId, listId) },
    ConsistentRead: true,
  });

describe('bulk writes under the list writer lease', () => {
  it('keeps the counters exact while single-line writes, bounces and deletions of the same addresses run against a bulk write', async () => {
    const client = await newClient(service);
    const address = (i: number) => `bulk${i % 1500}@example.com`;
    // Members first: some will be unsubscribed, deleted or changed concurrently.
    await request(subscribersUrl(client), { method: 'POST', token: client.token, body: Array.from({ length: 1500 }, (_, i) => ({ email: address(i) })) });
    const lines = Array.from({ length: 3000 }, (_, i) => ({
      line: i + 1,
      email: address(i * 7),
      subscribed: i % 3 === 0 ? false : i % 3 === 1 ? true : undefined,
      unsubscribedCause: 'PUBLISHER' as const,
      data: { data_round: i },
    }));
    // The bulk write takes the list's lease; the small (transactional) writes wait for it or go first.
    const bulk = applySubscribers(client.username, client.defaultListId, lines);
    const singles = Array.from({ length: 30 }, (_, k) =>
      request(subscribersUrl(client), { method: 'POST', token: client.token, body: [{ email: address(k * 11), subscribed: k % 2 === 0 }, { email: `new${k}@example.com` }] }),
    );
    const bounces = applySubscribers(client.username, client.defaultListId, [1, 2, 3].map((i) => ({ line: i, email: address(i * 7), subscribed: false, unsubscribedCause: 'HARD_BOUNCE' as const })));
    const deletion = request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: address(14) }, { email: address(21) }] });
    const [bulkReport, singleReplies, , deleted] = await Promise.all([bulk, Promise.all(singles), bounces, deletion]);
    expect(bulkReport.unique_emails_count).toBe(1500);
    expect(singleReplies.map((r) => r.status)).toEqual(singleReplies.map(() => 200));
    expect(deleted.status).toBe(200);
    const truth = await recount(client.username, client.defaultListId);
    expect(await counts(client)).toEqual(truth);
    // The two deleted addresses come back when the bulk write's lines for them land after the deletion.
    expect(truth.subscribed + truth.unsubscribed).toBeGreaterThanOrEqual(1500 - 2 + 30);
    expect(truth.subscribed + truth.unsubscribed).toBeLessThanOrEqual(1500 + 30);
    expect(truth.cause.HARD_BOUNCE + truth.cause.PUBLISHER).toBeGreaterThan(0);
    // Released clean: no owner, no journal entry left.
    const left = await writerItems(client.username, client.defaultListId);
    expect(left.filter((i) => i.owner !== undefined || i.sk.startsWith('J#'))).toEqual([]);
  });

  it('answers a failed BatchWriteItem with a 503 that counts exactly the lines that landed, with counters to match; the retry completes', async () => {
    const client = await newClient(service);
    const body = Array.from({ length: 1000 }, (_, i) => ({ email: `landed${i}@example.com` }));
    const send = ddb.send.bind(ddb);
    let subscriberBatches = 0;
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      if (command instanceof BatchWriteCommand) {
        const requests = Object.values(command.input.RequestItems ?? {})[0] ?? [];
        const isSubscriberPut = requests.some((r) => String(r.PutRequest?.Item?.sk ?? '').startsWith('SUB#'));
        // Every third subscriber batch fails for good (throttled past every retry).
        if (isSubscriberPut && ++subscriberBatches % 3 === 0) return Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }));
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

    const retry = await request<ApiBody<'subscribersPost'>>(subscribersUrl(client), { method: 'POST', token: client.token, body });
    expect(retry.status).toBe(200);
    expect(retry.body.report.nb_created).toBe(1000 - applied);
    expect(await counts(client)).toEqual({ ...truth, subscribed: 1000 });
  });

  it('settles the journal of a writer that died between its counters and its items: the next bulk write takes the lease over after it expires', async () => {
    const client = await newClient(service);
    const { username: clientId, defaultListId: listId } = client;
    const emails = Array.from({ length: 100 }, (_, i) => `dead${i}@example.com`);
    // A writer journals a chunk's counter deltas (+100 subscribed), writes 40 of its 100 items, and dies holding the lease
    // (killed through its client: nothing it does after reaches the table).
    let landed = 0;
    const kill = killAt((command) => {
      if (!isSubscriberBatch(command)) return 'pass';
      const size = Object.values(command.input.RequestItems ?? {})[0].length;
      if (landed + size <= 40) {
        landed += size;
        return 'pass';
      }
      return { items: 40 - landed };
    });
    await expect(
      applySubscribers(
        clientId,
        listId,
        emails.map((email, i) => ({ line: i + 1, email })),
      ),
    ).rejects.toThrow();
    kill.restore();
    expect(kill.killed).toBe(true);
    expect(await counts(client)).toMatchObject({ subscribed: 0 }); // the 40 that landed are not counted until settled
    const realNow = Date.now;
    // Later than the lease: the next writer takes it over and settles first.
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + leaseMs() + 1_000);
    const bulk = await request<ApiBody<'subscribersPost'>>(subscribersUrl(client), { method: 'POST', token: client.token, body: emails.map((email) => ({ email, data_round: 2 })) });
    expect(bulk.status).toBe(200);
    expect(bulk.body.report).toMatchObject({ nb_created: 60, nb_data_changed: 40 });
    vi.restoreAllMocks();
    const truth = await recount(clientId, listId);
    expect(truth.subscribed).toBe(100);
    expect(await counts(client)).toEqual(truth);
    expect((await writerItems(clientId, listId)).filter((i) => i.owner !== undefined || i.sk.startsWith('J#'))).toEqual([]);
  }, 60_000);

  it('a single-line write takes over a dead writer’s expired lease too, settling its journal before it writes', async () => {
    const client = await newClient(service);
    const { username: clientId, defaultListId: listId } = client;
    // A bulk writer journals +100 subscribed and dies before any item lands.
    const kill = killAt((command) => (isSubscriberBatch(command) ? 'kill' : 'pass'));
    await expect(
      applySubscribers(
        clientId,
        listId,
        Array.from({ length: 100 }, (_, i) => ({ line: i + 1, email: `ghost${i}@example.com` })),
      ),
    ).rejects.toThrow();
    kill.restore();
    const realNow = Date.now;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + leaseMs() + 1_000);
    const reply = await request(subscribersUrl(client), { method: 'POST', token: client.token, body: { email: 'alive@example.com' } });
    vi.restoreAllMocks();
    expect(reply.status).toBe(200);
    expect(await counts(client)).toMatchObject({ subscribed: 1 });
    expect(await recount(clientId, listId)).toMatchObject({ subscribed: 1 });
  });

  it('a transactional write waits while another writer holds the list, then applies', async () => {
    const client = await newClient(service);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const taken = new Promise<void>((resolve) => (holding = resolve));
    // A bulk writer holds the list while its first chunk's items are written (held back until release()).
    const send = ddb.send.bind(ddb);
    let first = true;
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation((async (command: unknown) => {
      if (first && isSubscriberBatch(command)) {
        first = false;
        holding();
        await held;
      }
      return send(command as never);
    }) as typeof ddb.send);
    const holder = applySubscribers(
      client.username,
      client.defaultListId,
      Array.from({ length: 200 }, (_, i) => ({ line: i + 1, email: `holder${i}@example.com`, subscribed: false })),
    );
    await taken;
    const started = Date.now();
    const pending = request(subscribersUrl(client), { method: 'POST', token: client.token, body: { email: 'waiter@example.com' } });
    setTimeout(release, 700);
    const reply = await pending;
    await holder;
    expect(reply.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(650);
    expect(await counts(client)).toMatchObject({ subscribed: 1 });
  });

  describe('the address filter of a list this process filled (lines of new addresses skip the read)', () => {
    const bulkOf = (prefix: string, n: number, extra: Array<Record<string, unknown>> = []) => [...Array.from({ length: n }, (_, i) => ({ email: `${prefix}${i}@example.com` })), ...extra];

    it('still sees an address a transactional write added between two bulk writes', async () => {
      const client = await newClient(service);
      expect((await request<ApiBody<'subscribersPost'>>(subscribersUrl(client), { method: 'POST', token: client.token, body: bulkOf('first', 150) })).body.report.nb_created).toBe(150);
      await request(subscribersUrl(client), { method: 'POST', token: client.token, body: { email: 'between@example.com', data_city: 'Lyon' } });
      const second = await request<ApiBody<'subscribersPost'>>(subscribersUrl(client), { method: 'POST', token: client.token, body: bulkOf('second', 150, [{ email: 'between@example.com', subscribed: false }, { email: 'first3@example.com', data_x: 1 }]) });
      expect(second.body.report).toMatchObject({ nb_created: 150, nb_unsubscribed: 1, nb_data_changed: 1 });
      const truth = await recount(client.username, client.defaultListId);
      expect(truth).toMatchObject({ subscribed: 300, unsubscribed: 1 });
      expect(await counts(client)).toEqual(truth);
    });

    it('still sees an address that another process’s bulk write added between two bulk writes of this one', async () => {
      const client = await newClient(service);
      const { username: clientId, defaultListId: listId } = client;
      await request(subscribersUrl(client), { method: 'POST', token: client.token, body: bulkOf('mine', 150) });
      // Another process (a fresh copy of the writer module: its own holds and address knowledge) writes one subscriber in bulk.
      vi.resetModules();
      const other = await import('../../shared/subscribers/index.js');
      await other.applySubscribers(clientId, listId, [{ line: 1, email: 'theirs@example.com' }, ...Array.from({ length: 99 }, (_, i) => ({ line: i + 2, email: `mine${i}@example.com` }))]);
      const again = await request<ApiBody<'subscribersPost'>>(subscribersUrl(client), { method: 'POST', token: client.token, body: bulkOf('more', 150, [{ email: 'theirs@example.com', subscribed: false }]) });
      expect(again.body.report).toMatchObject({ nb_created: 150, nb_unsubscribed: 1 });
      const truth = await recount(clientId, listId);
      expect(truth).toMatchObject({ subscribed: 300, unsubscribed: 1 });
      expect(await counts(client)).toEqual(truth);
    });
  });
});
