/**
 * Regression tests of issue 11: each malformed request that once broke the
 * service, through HTTP into the real handlers. Bad values go through HTTP;
 * SDK mocks only inject faults (throttling, a refused write).
 */
import { BatchExecuteStatementCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { localMounts } from '../../infra/local/server.js';
import { createForm, setClientSetting } from '../../shared/clients/clients.js';
import { ddb } from '../../shared/db/client.js';
import { captureOutput } from '../helpers/logs.js';
import { newEmail } from '../helpers/optin.js';
import { newClient, request, useService, type TestClient, type ApiBody, type ErrorBody } from '../helpers/service.js';
import { recount } from '../helpers/subscribers.js';

const service = useService({ mounts: localMounts });

afterEach(() => vi.restoreAllMocks());

const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};
/** Raw JSON of an object nested `levels` deep (JSON.stringify itself would overflow building it). */
const deepJson = (levels: number) => `{"email":"deep@example.com","data_x":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;

const subscribers = (client: TestClient) => `${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers`;
const count = async (client: TestClient) => (await request(`${subscribers(client)}/count`, { token: client.token })).body;

/** The unstorable data_* values the issue lists, with the cause each gets. */
const unstorable: Array<[string, unknown, RegExp]> = [
  ['1e300', 1e300, /data_x: must be between -9007199254740991 and 9007199254740991/],
  ['2^64', 2 ** 64, /data_x: must be between/],
  ['1e-320', 1e-320, /data_x: must be 0 or at least 1e-130 in magnitude/],
  ['31 levels of nesting', nested(31), /is nested more than 16 levels deep/],
  ['an empty key', { '': 1 }, /data_x: must not have an empty key/],
  ['an empty key deep inside', { a: [{ b: { '': true } }] }, /data_x\.a\[0\]\.b: must not have an empty key/],
];

describe('unstorable data_* values are line errors, never a 5xx or a partial write', () => {
  it.each(unstorable)('list API, one subscriber with %s: a report error, nothing written', async (_name, value, cause) => {
    const client = await newClient(service);
    const reply = await request<ApiBody<'subscribersPost'>>(subscribers(client), { method: 'POST', token: client.token, body: { email: 'one@example.com', data_x: value } });
    expect(reply.status).toBe(200);
    expect(reply.body.report.errors).toEqual([{ line: 1, email: 'one@example.com', cause: expect.stringMatching(cause) as string }]);
    expect(reply.body.report.nb_created).toBe(0);
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 0, unsubscribed: 0 });
  });

  it('list API, 5000 levels of nesting (deeper than JSON.stringify can go): a report error', async () => {
    const client = await newClient(service);
    const reply = await request<ApiBody<'subscribersPost'>>(subscribers(client), { method: 'POST', token: client.token, raw: deepJson(5000), headers: { 'content-type': 'application/json' } });
    expect(reply.status).toBe(200);
    expect(reply.body.report.errors[0].cause).toMatch(/nested more than 16 levels/);
    expect(await count(client)).toMatchObject({ subscribed: 0 });
  });

  it('list API, a batch of 150 with 1e300 on line 121: line 121 reported, the 149 others applied, counts exact', async () => {
    const client = await newClient(service);
    const batch = Array.from({ length: 150 }, (_, i) => ({ email: `b${i + 1}@example.com`, data_n: i === 120 ? 1e300 : i }));
    const reply = await request<ApiBody<'subscribersPost'>>(subscribers(client), { method: 'POST', token: client.token, body: batch });
    expect(reply.status).toBe(200);
    expect(reply.body.report.errors).toEqual([{ line: 121, email: 'b121@example.com', cause: expect.stringMatching(/data_n: must be between/) as string }]);
    expect(reply.body.report.nb_created).toBe(149);
    expect(await count(client)).toMatchObject({ subscribed: 149 });
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 149 });
  });

  it('deprecated POST, a batch of 150 with 1e300 on line 121: 400 INVALID_REQUEST naming L121, nothing written', async () => {
    const client = await newClient(service);
    const batch = Array.from({ length: 150 }, (_, i) => ({ email: `d${i + 1}@example.com`, data_n: i === 120 ? 1e300 : i }));
    const reply = await request(`${service.url}/v1/newsletters/subscribers`, { method: 'POST', token: client.token, body: batch });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 'INVALID_REQUEST', message: expect.stringMatching(/^1 error\(s\): L121: data_n: must be between/) as string });
    expect(await recount(client.username, client.defaultListId)).toMatchObject({ subscribed: 0, unsubscribed: 0 });
  });

  it('a stored subscriber cannot grow its data_* past 64 KiB across requests: the line is reported, nothing written', async () => {
    const client = await newClient(service);
    const big = (tag: string) => ({ email: 'grow@example.com', [`data_${tag}`]: 'x'.repeat(10_000) });
    for (const tag of ['a', 'b', 'c', 'd', 'e', 'f']) {
      expect((await request<ApiBody<'subscribersPost'>>(subscribers(client), { method: 'POST', token: client.token, body: big(tag) })).body.report.errors).toEqual([]);
    }
    const refused = await request<ApiBody<'subscribersPost'>>(subscribers(client), { method: 'POST', token: client.token, body: big('g') });
    expect(refused.status).toBe(200);
    expect(refused.body.report.errors).toEqual([{ line: 1, email: 'grow@example.com', cause: expect.stringMatching(/would exceed 65536 bytes/) as string }]);
    expect(refused.body.report.nb_data_changed).toBe(0);
  });

  it('opt-in: data_x 1e300 is a 400 naming the field, not a 500', async () => {
    const client = await newClient(service);
    const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
    const reply = await request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { email: newEmail(), form_key: formKey, data_x: 1e300 } });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, cause: expect.stringMatching(/^body: data_x: must be between/) as string });
  });

  it('opt-in update=true refuses data_* that would outgrow the stored limit with a 400, nothing written', async () => {
    const client = await newClient(service);
    await setClientSetting(client.username, 'rateLimits', { perIpPerMinute: 100, perKeyPerMinute: 100 });
    const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
    await request(subscribers(client), { method: 'POST', token: client.token, body: { email: 'upd@example.com' } });
    const update = (tag: string) =>
      request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { email: 'upd@example.com', form_key: formKey, update: true, [`data_${tag}`]: 'y'.repeat(10_000) } });
    for (const tag of ['a', 'b', 'c', 'd', 'e', 'f']) expect((await update(tag)).status).toBe(200);
    const refused = await update('g');
    expect(refused.body).toEqual({ status: 400, cause: expect.stringMatching(/^body: data_\* fields would exceed 65536 bytes/) as string });
  });

  it('tracking: published_time 1e19 is a 400 naming the field, not a 500', async () => {
    const client = await newClient(service, { siteHosts: ['news.example'] });
    const reply = await request<ErrorBody>(`${service.url}/v1/track/${client.trackingKey}`, {
      method: 'POST',
      body: { user_id: 'u1', url: 'https://news.example/a', published_time: 1e19 },
    });
    expect(reply.status).toBe(400);
    // The rule in the cause changed with the issue "Hostile feeds and dates": a number above 10^11 was taken for milliseconds even when it was a second of the range.
    expect(reply.body.cause).toBe('body.published_time: must be Unix seconds or an ISO 8601 date from 1970 to 9999-12-31 (seconds 0 to 253402300799; milliseconds 253402300800 to 253402300799999): 10000000000000000000 is after 9999-12-31T23:59:59Z');
  });

  it('files: email_list_id 1e300 is a 400 naming the field, not 404 "Unknown list 1e+300"', async () => {
    const client = await newClient(service);
    const reply = await request(`${service.url}/v1/files`, { method: 'POST', token: client.token, body: { email_list_id: 1e300, url: 'https://example.com/a.csv' } });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, cause: 'body.email_list_id: email_list_id must be an integer from 1 to 9999999999' });
  });
});

describe('503 only for faults a retry can cure', () => {
  /** Makes every call of the writer's conditional statements (BatchExecuteStatement) fail with `fault` (fault injection). */
  const failTransactions = (fault: Error) => {
    const send = ddb.send.bind(ddb);
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    return vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      if (command instanceof BatchExecuteStatementCommand) return Promise.reject(fault);
      return send(command as never);
    }) as typeof ddb.send);
  };

  it('a ValidationException (a value the table refuses) is a logged 500 with a generic cause, not "retry is safe"', async () => {
    const client = await newClient(service);
    const output = captureOutput();
    failTransactions(Object.assign(new Error('One or more parameter values were invalid'), { name: 'ValidationException', $metadata: { httpStatusCode: 400 } }));
    const reply = await request(subscribers(client), { method: 'POST', token: client.token, body: { email: 'v@example.com' } });
    expect(reply.status).toBe(500);
    expect(reply.headers.get('retry-after')).toBeNull();
    expect(reply.body).toEqual({ status: 500, cause: 'Internal error; nothing was applied. It has been logged.' });
    output.restore();
    const line = output.json().find((l) => l.message === 'subscriber write failed');
    // One ERROR line for the 5xx (the responder's, with the stack); the storage detail is a WARN beside it.
    expect(output.json().filter((l) => l.level === 'ERROR').map((l) => l.message)).toEqual(['request failed']);
    expect(line).toMatchObject({ level: 'WARN', retryable: false, applied: 0, detail: { name: 'ValidationException', httpStatusCode: 400 } });
  });

  it('throttling is a 503 with Retry-After that says retrying is safe', async () => {
    const client = await newClient(service);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    failTransactions(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }));
    const reply = await request<ErrorBody>(subscribers(client), { method: 'POST', token: client.token, body: { email: 't@example.com' } });
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.body.cause).toMatch(/Retry the request: applying it again is safe/);
  });

  it('a 5xx of DynamoDB and a network fault are 503 too', async () => {
    const client = await newClient(service);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    failTransactions(Object.assign(new Error('boom'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }));
    expect((await request(subscribers(client), { method: 'POST', token: client.token, body: { email: 'f@example.com' } })).status).toBe(503);
    vi.restoreAllMocks();
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    failTransactions(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    expect((await request(subscribers(client), { method: 'POST', token: client.token, body: { email: 'f@example.com' } })).status).toBe(503);
  });
});

describe('media types are case-insensitive and may carry whitespace and parameters (RFC 9110)', () => {
  const spellings = ['Application/Json', 'application/json ; charset=utf-8', 'APPLICATION/JSON;CHARSET=UTF-8', 'application/json;  charset="utf-8"'];

  it.each(spellings)('every JSON route parses a body sent as %j', async (contentType) => {
    const client = await newClient(service, { siteHosts: ['news.example'] });
    const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
    const send = (method: string, path: string, body: unknown, token?: string) =>
      request(`${service.url}${path}`, { method, token, raw: JSON.stringify(body), headers: { 'content-type': contentType } });
    const post = await send('POST', `/v1/newsletters/lists/${client.defaultListId}/subscribers`, { email: 'ct@example.com' }, client.token);
    expect(post.status).toBe(200);
    expect((post.body as ApiBody<'subscribersPost'>).report.nb_created).toBe(1);
    const legacy = await send('POST', '/v1/newsletters/subscribers', { email: 'ct2@example.com' }, client.token);
    expect(legacy.status).toBe(200);
    expect((await send('POST', '/v1/users/delete', [{ email: 'ct@example.com' }], client.token)).body).toEqual({ success: '1 users have been deleted' });
    const file = await send('POST', '/v1/files', { email_list_id: 999_999, url: 'https://example.com/a.csv' }, client.token);
    expect(file.body).toEqual({ status: 404, cause: expect.stringMatching(/list/i) as string });
    expect((await send('POST', `/v1/subscribe/${client.trackingKey}`, { email: newEmail(), form_key: formKey })).status).toBe(200);
    expect((await send('POST', `/v1/track/${client.trackingKey}`, { user_id: 'u1', url: 'https://news.example/a' })).status).toBe(200);
    const prefs = await send('PUT', '/v1/users/u1/preferences', { themes: ['Food'] }, client.token);
    expect(prefs.body).toMatchObject({ themes: ['food'] });
    const articles = await send('PUT', '/v1/articles', [{ url: 'https://news.example/c', title: 'C' }], client.token);
    expect(articles.body).toMatchObject({ created: 1, rejected: 0 });
  });

  it.each(['Application/X-WWW-Form-Urlencoded', 'application/x-www-form-urlencoded ; charset=UTF-8'])('form routes parse a body sent as %j', async (contentType) => {
    const client = await newClient(service, { siteHosts: ['news.example'] });
    const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
    const form = (fields: Record<string, string>) => ({ method: 'POST', raw: new URLSearchParams(fields).toString(), headers: { 'content-type': contentType } });
    expect((await request(`${service.url}/v1/subscribe/${client.trackingKey}`, form({ email: newEmail(), form_key: formKey }))).status).toBe(200);
    expect((await request(`${service.url}/v1/track/${client.trackingKey}`, form({ user_id: 'u1', url: 'https://news.example/b' }))).status).toBe(200);
  });

  it('other media types are a 415 that says what is accepted', async () => {
    const client = await newClient(service);
    for (const contentType of ['text/plain', 'application/jsonx', 'application/json-patch', 'json', 'multipart/form-data; boundary=x']) {
      const reply = await request(subscribers(client), { method: 'POST', token: client.token, raw: '{"email":"a@example.com"}', headers: { 'content-type': contentType } });
      expect(reply.status, contentType).toBe(415);
      expect(reply.body).toEqual({ status: 415, cause: 'Content-Type must be application/json' });
    }
  });
});

describe('addresses as people have them', () => {
  const real = ["o'brien@example.com", 'tom&jerry@example.com', 'a=b@example.com', 'user+news@example.com', 'user@xn--mnchen-3ya.de', 'a@b.xn--p1ai', 'user@ex--ample.com'];

  it('the list API and the deprecated API accept apostrophes, &, =, + tags, punycode and double hyphens', async () => {
    const client = await newClient(service);
    const reply = await request<ApiBody<'subscribersPost'>>(subscribers(client), { method: 'POST', token: client.token, body: real.map((email) => ({ email })) });
    expect(reply.body.report).toMatchObject({ errors: [], nb_created: real.length });
    const legacy = await request(`${service.url}/v1/newsletters/subscribers`, { method: 'POST', token: client.token, body: { email: "O'Neil@Example.com" } });
    expect(legacy.status).toBe(200);
  });

  it('opt-in accepts them; a Unicode domain is refused with a cause asking for punycode', async () => {
    const client = await newClient(service);
    await setClientSetting(client.username, 'rateLimits', { perIpPerMinute: 100, perKeyPerMinute: 100 });
    const formKey = await createForm(client.username, { listIds: [client.defaultListId], global: false });
    const subscribe = (email: string) => request(`${service.url}/v1/subscribe/${client.trackingKey}`, { method: 'POST', body: { email, form_key: formKey } });
    for (const email of real) expect((await subscribe(email)).status, email).toBe(200);
    expect((await subscribe('user@münchen.de')).body).toEqual({
      status: 400,
      cause: 'body.email: must be a valid email: it has a non-ASCII domain; send an internationalised domain in punycode (xn--…)',
    });
    expect(((await subscribe('\u212Aelvin@example.com')).body as ErrorBody).cause).toBe('body.email: must be a valid email: it has a non-ASCII local part');
  });

  it('users/delete accepts them too', async () => {
    const client = await newClient(service);
    await request(subscribers(client), { method: 'POST', token: client.token, body: real.map((email) => ({ email })) });
    const reply = await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: real.map((email) => ({ email })) });
    expect(reply.body).toEqual({ success: `${real.length} users have been deleted` });
    expect(await count(client)).toMatchObject({ subscribed: 0 });
  });
});

describe('shapes', () => {
  it('users/delete takes only {email} objects: a bare string is a 400, nothing deleted', async () => {
    const client = await newClient(service);
    await request(subscribers(client), { method: 'POST', token: client.token, body: [{ email: 'keep@example.com' }] });
    const reply = await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: ['keep@example.com', { email: 'keep@example.com' }, 5, [1]] });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      status: 400,
      cause: '3 error(s): an entry must be an {email} object, got "keep@example.com", an entry must be an {email} object, got 5, an entry must be an {email} object, got an array',
    });
    expect(await count(client)).toMatchObject({ subscribed: 1 });
  });

  it('the deprecated POST refuses an object as pseudo (or any profile field), nothing written', async () => {
    const client = await newClient(service);
    const reply = await request(`${service.url}/v1/newsletters/subscribers`, { method: 'POST', token: client.token, body: { email: 'p@example.com', pseudo: { nick: 'x' } } });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 'INVALID_REQUEST', message: '1 error(s): L1: pseudo must be a string' });
    const ok = await request(`${service.url}/v1/newsletters/subscribers`, { method: 'POST', token: client.token, body: { email: 'p@example.com', pseudo: 'Pat' } });
    expect(ok.status).toBe(200);
    expect(await count(client)).toMatchObject({ subscribed: 1 });
  });

  it('a request line above the HTTP parser\'s limit is a JSON 431 from the local gateway, not an empty reply', async () => {
    // The local gateway answers before any route is matched (in AWS, API Gateway's own limit answers), so
    // this reply is not a route's and is not checked against the API document.
    const reply = await fetch(`${service.url}/v1/openapi.json?q=${'x'.repeat(70_000)}`);
    expect(reply.status).toBe(431);
    expect(await reply.json()).toEqual({ status: 431, cause: 'Request line and headers are too large' });
  });

  it('GET /dev/outbox/%E0%A4%A (a malformed escape) is a 404, not a 500', async () => {
    const reply = await request(`${service.url}/dev/outbox/%E0%A4%A`);
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ status: 404 });
  });
});
