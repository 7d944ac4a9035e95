import { describe, expect, it } from 'vitest';
import { createList } from '../../shared/lists/lists.js';
import { defaultGuid } from '../../shared/subscribers/rules.js';
import { newClient, request, useService, type ApiBody, type ErrorBody, type TestClient } from '../helpers/service.js';
import { rawEventObjects, recount } from '../helpers/subscribers.js';

const service = useService();
const subscribersUrl = (listId: number | string) => `${service.url}/v1/newsletters/lists/${listId}/subscribers`;
const post = (client: TestClient, body: unknown, listId: number = client.defaultListId) =>
  request<ApiBody<'subscribersPost'>>(subscribersUrl(listId), { method: 'POST', token: client.token, body });
const count = async (client: TestClient, listId = client.defaultListId) => (await request(`${subscribersUrl(listId)}/count`, { token: client.token })).body;
const list = async (client: TestClient, query = '', listId = client.defaultListId) => request<ApiBody<'subscribersList'>>(`${subscribersUrl(listId)}?${query}`, { token: client.token });

describe('POST /v1/newsletters/lists/{list_id}/subscribers: the report', () => {
  it('reports one new subscriber', async () => {
    const client = await newClient(service);
    const reply = await post(client, { email: 'Ann@Example.com', data_first_name: 'Ann' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      report: { errors: [], unique_emails_count: 1, duplicate_emails_count: 0, duplicate_guid_count: 0, nb_created: 1, nb_subscribed: 1, nb_unsubscribed: 0, nb_data_changed: 0 },
    });
  });

  it('checks each counter definition on a batch against a list with existing subscribers', async () => {
    const client = await newClient(service);
    await post(client, [{ email: 'old1@x.co' }, { email: 'old2@x.co' }, { email: 'old3@x.co', subscribed: false }, { email: 'old4@x.co', guid: 'g4' }]);
    const reply = await post(client, [
      { email: 'new1@x.co', guid: 'shared-guid' }, // created + subscribed
      { email: 'new2@x.co', subscribed: false }, // created + unsubscribed
      { email: 'old1@x.co', subscribed: 'false', unsubscribed_cause: 'PUBLISHER' }, // unsubscribed
      { email: 'old3@x.co', subscribed: true }, // resubscribed
      { email: 'old2@x.co', data_city: 'Oslo' }, // data changed
      { email: 'old4@x.co', guid: 'g4' }, // no change
      { email: 'not-an-email' }, // error
      { email: 'new3@x.co', guid: 'shared-guid' }, // created + subscribed, duplicate guid
      { email: 'NEW1@x.co', guid: 'shared-guid' }, // duplicate email (last line wins)
      { subscribed: true }, // error
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body.report).toEqual({
      errors: [
        { line: 7, email: 'not-an-email', cause: 'email is missing or invalid' },
        { line: 10, email: null, cause: 'email is missing or invalid' },
      ],
      unique_emails_count: 7,
      duplicate_emails_count: 1,
      duplicate_guid_count: 1,
      nb_created: 3,
      nb_subscribed: 3,
      nb_unsubscribed: 2,
      nb_data_changed: 1,
    });
    expect(await count(client)).toEqual({ subscribed: 5, unsubscribed: 2, cause: { HARD_BOUNCE: 0, PUBLISHER: 1, READER: 1 } });
  });

  it('applies the same input twice to the same state, the second time reporting no change', async () => {
    const client = await newClient(service);
    const batch = [{ email: 'a@x.co', data_v: 1 }, { email: 'b@x.co', subscribed: false }];
    await post(client, batch);
    const before = (await list(client)).body;
    const second = await post(client, batch);
    expect(second.body.report).toMatchObject({ nb_created: 0, nb_subscribed: 0, nb_unsubscribed: 0, nb_data_changed: 0, unique_emails_count: 2 });
    expect((await list(client)).body).toEqual(before);
  });

  it('lets the last line of a repeated address win', async () => {
    const client = await newClient(service);
    await post(client, [{ email: 'a@x.co', subscribed: false }, { email: 'a@x.co', subscribed: true, guid: 'last' }]);
    expect((await list(client)).body).toEqual([
      { email: 'a@x.co', guid: 'last', subscribed: true, subscribed_at: expect.any(String) as string, unsubscribe_url: expect.any(String) as string, preferences_url: expect.any(String) as string },
    ]);
  });

  it('sets subscribed_at when an address becomes subscribed and keeps it while it stays subscribed', async () => {
    const client = await newClient(service);
    await post(client, { email: 'a@x.co', subscribed: false });
    expect((await list(client)).body[0].subscribed_at).toBeNull();
    await post(client, { email: 'a@x.co', subscribed: true });
    const first = (await list(client)).body[0].subscribed_at;
    expect(first).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await post(client, { email: 'a@x.co', subscribed: true, data_x: 1 });
    expect((await list(client)).body[0].subscribed_at).toBe(first);
  });

  it('defaults the guid to the md5 of the lower-cased email', async () => {
    const client = await newClient(service);
    await post(client, { email: 'Mixed@Case.io' });
    expect((await list(client)).body[0]).toMatchObject({ email: 'mixed@case.io', guid: defaultGuid('mixed@case.io') });
  });

  it('records nl_subscribe and nl_unsubscribe events from the table stream, one per change, each with the id of its stream record', async () => {
    const client = await newClient(service);
    await post(client, [{ email: 'a@x.co' }, { email: 'b@x.co' }]);
    await post(client, [{ email: 'a@x.co', subscribed: false, unsubscribed_cause: 'PUBLISHER' }, { email: 'c@x.co' }]);
    const subscribes = (await rawEventObjects(client.username, 'nl_subscribe')).flat();
    const unsubscribes = (await rawEventObjects(client.username, 'nl_unsubscribe')).flat();
    expect(subscribes.map((e) => e.email).sort()).toEqual(['a@x.co', 'b@x.co', 'c@x.co']);
    expect(new Set(subscribes.map((e) => e._id)).size).toBe(3);
    expect(unsubscribes).toEqual([{ date: expect.any(String) as string, email: 'a@x.co', cause: 'PUBLISHER', email_list_id: client.defaultListId, guid: defaultGuid('a@x.co'), _id: expect.any(String) as string }]);
  });
});

describe('POST …/subscribers: bad input', () => {
  it.each([
    ['a body that is not JSON', { raw: '{"email":', headers: { 'content-type': 'application/json' } }, 400, /^body: not valid JSON/],
    ['a number', { body: 42 }, 400, /^body: must be a subscriber object or an array/],
    ['a string', { body: 'a@x.co' }, 400, /^body: must be a subscriber object or an array/],
    ['an empty array', { body: [] }, 400, /^body: the array is empty$/],
    ['20,001 lines', { body: Array.from({ length: 20_001 }, (_, i) => ({ email: `u${i}@x.co` })) }, 400, /^body: at most 20000 subscribers per request$/],
    ['a 7 MB body', { raw: JSON.stringify([{ email: 'a@x.co', data_blob: 'x'.repeat(7 * 1024 * 1024) }]), headers: { 'content-type': 'application/json' } }, 413, /larger than/],
    ['a form body', { raw: 'email=a@x.co', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, /Content-Type must be application\/json/],
  ])('rejects %s with a cause and writes nothing', async (_name, options, status, cause) => {
    const client = await newClient(service);
    const reply = await request<ErrorBody>(subscribersUrl(client.defaultListId), { method: 'POST', token: client.token, ...options });
    expect(reply.status).toBe(status);
    expect(reply.body.cause).toMatch(cause);
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 0, unsubscribed: 0 });
  });

  it('reports lines with spaces, unicode, 300 characters or wrong types and applies the others', async () => {
    const client = await newClient(service);
    const reply = await post(client, [
      { email: 'with space@x.co' },
      { email: 'ünï@x.co' },
      { email: `${'a'.repeat(300)}@x.co` },
      { email: 'ok@x.co', subscribed: 3 },
      { email: 'ok2@x.co', guid: { nested: true } },
      { email: 'ok3@x.co', unsubscribed_cause: 'SOMEONE' },
      [],
      { email: 'fine@x.co' },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body.report.errors).toEqual([
      { line: 1, email: 'with space@x.co', cause: 'email is missing or invalid' },
      { line: 2, email: 'ünï@x.co', cause: 'email is missing or invalid' },
      { line: 3, email: `${'a'.repeat(254)}…`, cause: 'email is missing or invalid' },
      { line: 4, email: 'ok@x.co', cause: 'subscribed must be true or false' },
      { line: 5, email: 'ok2@x.co', cause: 'guid must be a string' },
      { line: 6, email: 'ok3@x.co', cause: 'unsubscribed_cause must be READER or PUBLISHER' },
      { line: 7, email: null, cause: 'a subscriber must be a JSON object' },
    ]);
    expect(reply.body.report.nb_created).toBe(1);
    expect((await list(client)).body.map((s: { email: string }) => s.email)).toEqual(['fine@x.co']);
  });

  it("answers 404 for an unknown list and for another client's list, without writing", async () => {
    const a = await newClient(service);
    const b = await newClient(service);
    const secret = await createList(a.username, 'A only');
    expect((await post(b, { email: 'x@x.co' }, 99)).status).toBe(404);
    const cross = await post(b, { email: 'x@x.co' }, secret.id);
    expect(cross.status).toBe(404);
    expect(cross.body).toEqual({ status: 404, cause: `Unknown list ${secret.id}` });
    expect(await recount(a.username, secret.id)).toMatchObject({ subscribed: 0 });
    expect((await request(`${subscribersUrl(secret.id)}/count`, { token: b.token })).status).toBe(404);
    expect((await list(b, '', secret.id)).status).toBe(404);
  });

  it('rejects a list id that is not a positive integer', async () => {
    const client = await newClient(service);
    const reply = await request<ErrorBody>(`${subscribersUrl('abc')}/count`, { token: client.token });
    expect(reply.status).toBe(400);
    expect(reply.body.cause).toBe('path.list_id: list_id must be a positive integer');
  });
});

describe('open tracking consent and data', () => {
  it('sets consent from true/false in any case and leaves it unchanged for other values', async () => {
    const { getSubscriber } = await import('../../shared/subscribers/service.js');
    const client = await newClient(service);
    await post(client, { email: 'a@x.co', open_tracking_consent: 'TRUE', data_a: 1 });
    expect((await getSubscriber(client.username, client.defaultListId, 'a@x.co'))?.openTrackingConsent).toBe(true);
    const unchanged = await post(client, { email: 'a@x.co', open_tracking_consent: 'perhaps' });
    expect(unchanged.body.report.nb_data_changed).toBe(0);
    expect((await getSubscriber(client.username, client.defaultListId, 'a@x.co'))?.openTrackingConsent).toBe(true);
    await post(client, { email: 'a@x.co', open_tracking_consent: false, data_b: 2 });
    const stored = await getSubscriber(client.username, client.defaultListId, 'a@x.co');
    expect(stored?.openTrackingConsent).toBe(false);
    expect(stored?.data).toEqual({ data_a: 1, data_b: 2 });
  });
});
