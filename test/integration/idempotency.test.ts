import { BatchExecuteStatementCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import type { HandlerInput } from '../../shared/http/handler.js';
import { idempotent } from '../../shared/http/idempotency.js';
import { json } from '../../shared/http/response.js';
import { createList } from '../../shared/lists/lists.js';
import { subscriberRoutes } from '../../shared/routes/subscribers.js';
import { applySubscribers, getSubscriber } from '../../shared/subscribers/service.js';
import { newClient, request, useService, type ApiBody, type ErrorBody, type TestClient } from '../helpers/service.js';
import { csvRoute, startFileServer, type FileServer } from './imports-helpers.js';

const service = useService();
let files: FileServer;
beforeAll(async () => {
  files = await startFileServer();
});
afterAll(async () => {
  delete process.env.IMPORT_ALLOW_LOOPBACK;
  await files.close();
});
afterEach(() => vi.restoreAllMocks());

const subscribersUrl = (listId: number) => `${service.url}/v1/newsletters/lists/${listId}/subscribers`;
const post = <T>(url: string, client: TestClient, body: unknown, key?: string) =>
  request<T>(url, { method: 'POST', token: client.token, body, headers: key === undefined ? {} : { 'idempotency-key': key } });
const newKey = () => `key-${Math.random().toString(36).slice(2)}`;

/** The client's stored idempotency records. */
async function records(clientId: string) {
  const out = await ddb.send(new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.idempotencyPartition(clientId) } }));
  return out.Items ?? [];
}

describe('Idempotency-Key on POST …/lists/{list_id}/subscribers', () => {
  it('answers the first answer again for the same key and body, applying nothing', async () => {
    const client = await newClient(service);
    const key = newKey();
    const body = [{ email: 'a@x.co', data_name: 'First' }, { email: 'bad' }];
    const first = await post<ApiBody<'subscribersPost'>>(subscribersUrl(client.defaultListId), client, body, key);
    expect(first.status).toBe(200);
    expect(first.body.report.nb_created).toBe(1);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Changed since: a replay that applied the body again would set the name back and subscribe again.
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'a@x.co', subscribed: false, data: { data_name: 'Later' } }]);
    const again = await post<ApiBody<'subscribersPost'>>(subscribersUrl(client.defaultListId), client, body, key);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await getSubscriber(client.username, client.defaultListId, 'a@x.co')).toMatchObject({ subscribed: false, data: { data_name: 'Later' } });
    const stored = await records(client.username);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ status: 'COMPLETED', sk: expect.stringMatching(/^POST \/v1\/newsletters\/lists\/\{list_id\}\/subscribers#[A-Za-z0-9+/]{43}=$/) as string });
    // Kept 24 hours, then DynamoDB's TTL removes it.
    expect(Number(stored[0].ttl) - Date.now() / 1000).toBeGreaterThan(24 * 3600 - 60);
    // Without the key the same body is applied again.
    const without = await post<ApiBody<'subscribersPost'>>(subscribersUrl(client.defaultListId), client, body);
    expect(without.body.report).toMatchObject({ nb_created: 0, nb_data_changed: 1 });
    expect(await getSubscriber(client.username, client.defaultListId, 'a@x.co')).toMatchObject({ data: { data_name: 'First' } });
  });

  it('refuses the same key with another body or another list: 422 with a cause, nothing applied', async () => {
    const client = await newClient(service);
    const other = await createList(client.username, 'Other');
    const key = newKey();
    expect((await post(subscribersUrl(client.defaultListId), client, [{ email: 'a@x.co' }], key)).status).toBe(200);
    for (const [url, body] of [
      [subscribersUrl(client.defaultListId), [{ email: 'b@x.co' }]],
      [subscribersUrl(other.id), [{ email: 'a@x.co' }]],
    ] as const) {
      const reply = await post<ErrorBody>(url, client, body, key);
      expect(reply.status).toBe(422);
      expect(reply.body.cause).toMatch(/^header Idempotency-Key: already used within 24 hours for a different request/);
    }
    expect(await getSubscriber(client.username, client.defaultListId, 'b@x.co')).toBeUndefined();
    expect(await getSubscriber(client.username, other.id, 'a@x.co')).toBeUndefined();
  });

  it('keeps keys per client: the same key of another client is its own request', async () => {
    const [one, two] = [await newClient(service), await newClient(service)];
    const key = newKey();
    const body = [{ email: 'same@x.co' }];
    expect((await post<ApiBody<'subscribersPost'>>(subscribersUrl(one.defaultListId), one, body, key)).body.report.nb_created).toBe(1);
    const theirs = await post<ApiBody<'subscribersPost'>>(subscribersUrl(two.defaultListId), two, body, key);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.report.nb_created).toBe(1);
    expect(await getSubscriber(two.username, two.defaultListId, 'same@x.co')).toBeDefined();
  });

  it('answers 409 with Retry-After while the first request with the key still runs, then the first answer', async () => {
    const client = await newClient(service);
    const key = newKey();
    const body = [{ email: 'slow@x.co' }];
    // Fault injection: the first request's writes wait until the second has been answered.
    let release!: () => void;
    const gate = new Promise<void>((done) => (release = done));
    let entered!: () => void;
    const inside = new Promise<void>((done) => (entered = done));
    const send = ddb.send.bind(ddb);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      const write = command instanceof BatchExecuteStatementCommand;
      if (write) entered();
      return (write ? gate : Promise.resolve()).then(() => send(command as never));
    }) as typeof ddb.send);
    const first = post<ApiBody<'subscribersPost'>>(subscribersUrl(client.defaultListId), client, body, key);
    await inside;
    const second = await post<ErrorBody>(subscribersUrl(client.defaultListId), client, body, key);
    release();
    expect(second.status).toBe(409);
    expect(second.body.cause).toBe('header Idempotency-Key: a request with this key is still being processed; retry when it has answered');
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    const done = await first;
    expect(done.status).toBe(200);
    const third = await post(subscribersUrl(client.defaultListId), client, body, key);
    expect(third.text).toBe(done.text);
  });

  it('holds the key of a request that dies until its Lambda deadline, then a retry runs', async () => {
    // The wrapper itself, with a Lambda context whose deadline is 1 s away and a first run that never answers (killed at its timeout).
    const route = subscriberRoutes.usersDelete;
    const runs: string[] = [];
    const wrapped = idempotent(route, ({ body }) => {
      runs.push(JSON.stringify(body));
      return runs.length === 1 ? new Promise<never>(() => undefined) : json(200, { success: 'ran' });
    });
    const clientId = `t-${randomUUID().slice(0, 12)}`;
    const input = (deadlineMs: number) => {
      const deadline = Date.now() + deadlineMs;
      const context = { getRemainingTimeInMillis: () => deadline - Date.now() } as Context;
      return { body: [{ email: 'a@x.co' }], params: undefined, query: undefined, clientId, headers: { 'idempotency-key': 'dies' }, sourceIp: '', event: {} as APIGatewayProxyEventV2, context } as unknown as HandlerInput<typeof route>;
    };
    void wrapped(input(1_000));
    await new Promise((done) => setTimeout(done, 200));
    await expect(wrapped(input(29_000))).rejects.toMatchObject({ status: 409 });
    await new Promise((done) => setTimeout(done, 1_000));
    const retried = await wrapped(input(29_000));
    expect(retried.statusCode).toBe(200);
    expect(runs).toHaveLength(2);
  });

  it('keeps no answer after an error: the key is free again', async () => {
    const client = await newClient(service);
    const key = newKey();
    const unknownList = await post<ErrorBody>(subscribersUrl(99_999), client, [{ email: 'a@x.co' }], key);
    expect(unknownList.status).toBe(404);
    expect(await records(client.username)).toEqual([]);
  });

  it('lets browsers send the key and read the replay header (CORS)', async () => {
    const preflight = await fetch(`${service.url}/v1/users/delete`, { method: 'OPTIONS', headers: { origin: 'https://publisher.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'idempotency-key' } });
    expect(preflight.headers.get('access-control-allow-headers')).toContain('idempotency-key');
    const client = await newClient(service);
    const reply = await post(subscribersUrl(client.defaultListId), client, [{ email: 'c@x.co' }], newKey());
    expect(reply.headers.get('access-control-expose-headers')).toContain('idempotent-replayed');
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a control character', 'a\tb'],
  ])('refuses a key that is %s with a 400', async (_name, key) => {
    const client = await newClient(service);
    const reply = await post<ErrorBody>(subscribersUrl(client.defaultListId), client, [{ email: 'a@x.co' }], key);
    expect(reply.status).toBe(400);
    expect(reply.body.cause).toMatch(/^header Idempotency-Key: must be 1 to 255 printable ASCII characters/);
    expect(await getSubscriber(client.username, client.defaultListId, 'a@x.co')).toBeUndefined();
  });
});

describe('Idempotency-Key on the other write routes', () => {
  it('POST /v1/newsletters/subscribers (deprecated) answers the first answer again', async () => {
    const client = await newClient(service);
    const key = newKey();
    const url = `${service.url}/v1/newsletters/subscribers`;
    const first = await post(url, client, { email: 'legacy@x.co' }, key);
    expect(first.status).toBe(200);
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'legacy@x.co', subscribed: false }]);
    const again = await post(url, client, { email: 'legacy@x.co' }, key);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('deprecation')).toBe(first.headers.get('deprecation'));
    expect(await getSubscriber(client.username, client.defaultListId, 'legacy@x.co')).toMatchObject({ subscribed: false });
    expect((await post(url, client, { email: 'other@x.co' }, key)).status).toBe(422);
  });

  it('POST /v1/users/delete answers the first answer again', async () => {
    const client = await newClient(service);
    const key = newKey();
    const url = `${service.url}/v1/users/delete`;
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'gone@x.co' }]);
    const first = await post(url, client, [{ email: 'gone@x.co' }], key);
    expect(first.body).toEqual({ success: '1 users have been deleted' });
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'gone@x.co' }]);
    const again = await post(url, client, [{ email: 'gone@x.co' }], key);
    expect(again.text).toBe(first.text);
    expect(await getSubscriber(client.username, client.defaultListId, 'gone@x.co')).toBeDefined();
  });

  it('POST /v1/files creates one imported file for a retried key (201 and Location again)', async () => {
    process.env.IMPORT_ALLOW_LOOPBACK = 'true';
    files.routes.set('/idem.csv', csvRoute('email\na@b.co\n'));
    const client = await newClient(service);
    const key = newKey();
    const body = { email_list_id: client.defaultListId, url: `${files.url}/idem.csv` };
    const first = await post<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, client, body, key);
    expect(first.status).toBe(201);
    const fetched = files.hits.get('/idem.csv');
    const again = await post<ApiBody<'filesCreate'>>(`${service.url}/v1/files`, client, body, key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('location')).toBe(`/v1/files/${first.body.id}`);
    expect(files.hits.get('/idem.csv')).toBe(fetched);
    const listed = await request<ApiBody<'filesList'>>(`${service.url}/v1/files`, { token: client.token });
    expect(listed.body).toHaveLength(1);
  });
});
