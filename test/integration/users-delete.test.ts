import { BatchExecuteStatementCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ddb } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { createList } from '../../shared/lists/lists.js';
import { applySubscribers, getSubscriber } from '../../shared/subscribers/service.js';
import { newClient, request, useService, type ErrorBody } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';

const service = useService();
const url = () => `${service.url}/v1/users/delete`;
afterEach(() => vi.restoreAllMocks());

describe('POST /v1/users/delete', () => {
  it('removes each address from every list of the client, with its data, and keeps counts exact', async () => {
    const client = await newClient(service);
    const second = await createList(client.username, 'Second');
    await applySubscribers(client.username, client.defaultListId, [
      { line: 1, email: 'gone@x.co', data: { data_name: 'G' } },
      { line: 2, email: 'stays@x.co' },
      { line: 3, email: 'also-gone@x.co', subscribed: false },
    ]);
    await applySubscribers(client.username, second.id, [{ line: 1, email: 'gone@x.co' }, { line: 2, email: 'stays@x.co' }]);
    const reply = await request(url(), { method: 'POST', token: client.token, body: [{ email: 'GONE@x.co' }, { email: 'also-gone@x.co' }, { email: 'never-there@x.co' }] });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: '3 users have been deleted' });
    expect(await getSubscriber(client.username, client.defaultListId, 'gone@x.co')).toBeUndefined();
    expect(await getSubscriber(client.username, second.id, 'gone@x.co')).toBeUndefined();
    expect(await getSubscriber(client.username, second.id, 'stays@x.co')).toBeDefined();
    for (const listId of [client.defaultListId, second.id]) {
      const counted = await request(`${service.url}/v1/newsletters/lists/${listId}/subscribers/count`, { token: client.token });
      expect(counted.body).toEqual(await recount(client.username, listId));
    }
    expect((await request(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers/count`, { token: client.token })).body).toEqual({
      subscribed: 1,
      unsubscribed: 0,
      cause: { HARD_BOUNCE: 0, PUBLISHER: 0, READER: 0 },
    });
  });

  it('gives the same state when run twice', async () => {
    const client = await newClient(service);
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'a@x.co' }]);
    const body = [{ email: 'a@x.co' }];
    expect((await request(url(), { method: 'POST', token: client.token, body })).status).toBe(200);
    const again = await request(url(), { method: 'POST', token: client.token, body });
    expect(again.body).toEqual({ success: '1 users have been deleted' });
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 0, unsubscribed: 0 });
  });

  it('rejects the whole request when any email is invalid, deleting nothing', async () => {
    const client = await newClient(service);
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'keep@x.co' }]);
    const reply = await request(url(), { method: 'POST', token: client.token, body: [{ email: 'keep@x.co' }, { email: 'nope' }, {}] });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, cause: '2 error(s): email is not valid nope, email is not valid null' });
    expect(await getSubscriber(client.username, client.defaultListId, 'keep@x.co')).toBeDefined();
  });

  it('quotes an empty or space-padded email in its cause, which then never ends in a space', async () => {
    const client = await newClient(service);
    const reply = await request<{ cause: string }>(url(), { method: 'POST', token: client.token, body: [{ email: '' }, { email: ' a@b ' }] });
    expect(reply.body).toEqual({ status: 400, cause: '2 error(s): email is not valid "", email is not valid " a@b "' });
  });

  it("never deletes another client's subscribers", async () => {
    const a = await newClient(service);
    const b = await newClient(service);
    await applySubscribers(a.username, a.defaultListId, [{ line: 1, email: 'shared@x.co' }]);
    await request(url(), { method: 'POST', token: b.token, body: [{ email: 'shared@x.co' }] });
    expect(await getSubscriber(a.username, a.defaultListId, 'shared@x.co')).toBeDefined();
  });

  it.each([
    [{}, 'body: must be an array of {email} objects'],
    [[], 'body: the array is empty'],
    [Array.from({ length: 20_001 }, (_, i) => ({ email: `u${i}@x.co` })), 'body: at most 20000 users per request'],
  ])('rejects %#', async (body, cause) => {
    const client = await newClient(service);
    const reply = await request(url(), { method: 'POST', token: client.token, body });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, cause });
  });

  it('deletes an address written a moment ago even when the per-email index has not caught up (every list read by key)', async () => {
    const client = await newClient(service);
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'fresh@x.co' }]);
    // The per-email index (gsi2) is eventually consistent in AWS: here it answers as if it lagged.
    const send = ddb.send.bind(ddb);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      if (command instanceof QueryCommand && command.input.IndexName === 'gsi2') return Promise.resolve({ Items: [], Count: 0 });
      return send(command as never);
    }) as typeof ddb.send);
    const reply = await request(url(), { method: 'POST', token: client.token, body: [{ email: 'fresh@x.co' }] });
    vi.restoreAllMocks();
    expect(reply.body).toEqual({ success: '1 users have been deleted' });
    expect(await getSubscriber(client.username, client.defaultListId, 'fresh@x.co')).toBeUndefined();
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 0 });
  });

  it('says exactly what it removed when it cannot finish: the list it deleted from, never "deleted" for the rest', async () => {
    const client = await newClient(service);
    const other = await createList(client.username, 'second');
    for (const listId of [client.defaultListId, other.id]) await applySubscribers(client.username, listId, [{ line: 1, email: 'both@x.co' }]);
    // Every deletion on the second list fails with a storage fault that outlasts the retries.
    const send = ddb.send.bind(ddb);
    const otherPartition = keys.subscribersPartition(client.username, other.id);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      if (command instanceof BatchExecuteStatementCommand && (command.input.Statements ?? []).some((st) => st.Statement?.startsWith('DELETE') && st.Parameters?.[0] === otherPartition)) {
        return Promise.reject(Object.assign(new Error('Internal server error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }));
      }
      return send(command as never);
    }) as typeof ddb.send);
    const reply = await request<ErrorBody>(url(), { method: 'POST', token: client.token, body: [{ email: 'both@x.co' }] });
    vi.restoreAllMocks();
    expect(reply.status).toBe(503);
    expect(reply.body.cause).toBe(
      `1 subscription(s) were deleted (from list ${client.defaultListId}) and 0 address(es) were removed from every list before a storage error; the other addresses may still be on some lists. Retry the request: deleting again is safe.`,
    );
    expect(await getSubscriber(client.username, client.defaultListId, 'both@x.co')).toBeUndefined();
    expect(await getSubscriber(client.username, other.id, 'both@x.co')).toBeDefined();
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 0 });
    expect((await request(url(), { method: 'POST', token: client.token, body: [{ email: 'both@x.co' }] })).status).toBe(200);
    expect(await recount(client.username, other.id)).toMatchObject({ subscribed: 0 });
  });
});
