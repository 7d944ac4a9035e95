import { describe, expect, it } from 'vitest';
import { getSubscriber } from '../../shared/subscribers/service.js';
import { newClient, request, useService, type ApiBody } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';

const service = useService();
const url = (path = '') => `${service.url}/v1/newsletters/subscribers${path}`;

describe('deprecated list-less subscribers API', () => {
  it('subscribes one object with profile fields to the default list and answers with a success body and deprecation headers', async () => {
    const client = await newClient(service);
    const reply = await request(url(), {
      method: 'POST',
      token: client.token,
      body: { email: 'Ann@x.co', guid: 'u-1', subscribed: 'true', pseudo: 'annie', first_name: 'Ann', last_name: 'Lee', location: 'Oslo', segment: 'vip' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: '1 subscriber(s) processed', report: expect.objectContaining({ nb_created: 1, nb_subscribed: 1 }) as object });
    expect(reply.headers.get('deprecation')).toBe('@1767225600');
    expect(reply.headers.get('sunset')).toBe('Fri, 31 Dec 2027 00:00:00 GMT');
    expect(reply.headers.get('link')).toBe(`</v1/newsletters/lists/${client.defaultListId}/subscribers>; rel="successor-version"`);
    const stored = await getSubscriber(client.username, client.defaultListId, 'ann@x.co');
    expect(stored).toMatchObject({ guid: 'u-1', subscribed: true, data: { data_pseudo: 'annie', data_first_name: 'Ann', data_last_name: 'Lee', data_location: 'Oslo', data_segment: 'vip' } });
  });

  it('counts and lists the default list like the list API', async () => {
    const client = await newClient(service);
    await request(url(), { method: 'POST', token: client.token, body: [{ email: 'a@x.co' }, { email: 'b@x.co', subscribed: false, unsubscribed_cause: 'PUBLISHER' }] });
    const count = await request(url('/count'), { token: client.token });
    expect(count.body).toEqual(await recount(client.username, client.defaultListId));
    expect(count.body).toEqual({ subscribed: 1, unsubscribed: 1, cause: { HARD_BOUNCE: 0, PUBLISHER: 1, READER: 0 } });
    expect(count.headers.get('link')).toBe(`</v1/newsletters/lists/${client.defaultListId}/subscribers/count>; rel="successor-version"`);
    const listed = await request<ApiBody<'legacySubscribersList'>>(url('?status=unsubscribed'), { token: client.token });
    expect(listed.body.map((s) => s.email)).toEqual(['b@x.co']);
    expect(listed.headers.get('deprecation')).toBe('@1767225600');
  });

  it('rejects a batch with invalid lines, naming each line, and writes nothing', async () => {
    const client = await newClient(service);
    const reply = await request(url(), { method: 'POST', token: client.token, body: [{ email: 'ok@x.co' }, { email: 'bad' }, { guid: 'x' }, { email: 'ok2@x.co' }] });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 'INVALID_REQUEST', message: '2 error(s): L2: email is missing or invalid, L3: email is missing or invalid' });
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 0, unsubscribed: 0 });
  });

  it('uses the INVALID_REQUEST shape for every bad body', async () => {
    const client = await newClient(service);
    const notJson = await request<ApiBody<'legacySubscribersPost', 400>>(url(), { method: 'POST', token: client.token, raw: '[{', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.body.status).toBe('INVALID_REQUEST');
    expect(notJson.body.message).toMatch(/^1 error\(s\): body: not valid JSON/);
    const tooMany = await request(url(), { method: 'POST', token: client.token, body: Array.from({ length: 20_001 }, (_, i) => ({ email: `u${i}@x.co` })) });
    expect(tooMany.body).toEqual({ status: 'INVALID_REQUEST', message: '1 error(s): body: at most 20000 subscribers per request' });
  });
});
