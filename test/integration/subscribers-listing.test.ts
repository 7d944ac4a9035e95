import { beforeAll, describe, expect, it } from 'vitest';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { newClient, request, useService, type TestClient, type ApiBody, type ErrorBody } from '../helpers/service.js';

const service = useService();
let client: TestClient;
const emails = Array.from({ length: 45 }, (_, i) => `user${String(i).padStart(2, '0')}@example.com`);
// Every third address is unsubscribed; two addresses share a search prefix on another domain.
const extra = ['zed.one@other.org', 'zed.two@other.org'];

beforeAll(async () => {
  client = await newClient(service);
  await applySubscribers(client.username, client.defaultListId, [...emails, ...extra].map((email, i) => ({ line: i + 1, email, subscribed: i % 3 !== 0 })));
});

const page = <T = ApiBody<'subscribersList'>>(query: string) => request<T>(`${service.url}/v1/newsletters/lists/${client.defaultListId}/subscribers?${query}`, { token: client.token });
const emailsOf = (body: Array<{ email: string }>) => body.map((s) => s.email);

describe('GET /v1/newsletters/lists/{list_id}/subscribers', () => {
  it('pages in email order with offset and count, visiting every subscriber exactly once', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 60; offset += 10) seen.push(...emailsOf((await page(`offset=${offset}&count=10`)).body));
    expect(seen).toEqual([...emails, ...extra].sort());
  });

  it('defaults to 100 items and returns the 2.3 fields, with the reader links', async () => {
    const reply = await page('');
    expect(reply.body).toHaveLength(47);
    expect(Object.keys(reply.body[0]).sort()).toEqual(['email', 'guid', 'preferences_url', 'subscribed', 'subscribed_at', 'unsubscribe_url']);
  });

  it('filters by status', async () => {
    const subscribed = emailsOf((await page('status=subscribed&count=1000')).body);
    const unsubscribed = emailsOf((await page('status=unsubscribed&count=1000')).body);
    const all = [...emails, ...extra];
    expect(subscribed).toEqual(all.filter((_, i) => i % 3 !== 0).sort());
    expect(unsubscribed).toEqual(all.filter((_, i) => i % 3 === 0).sort());
  });

  it('matches search as a case-insensitive prefix of the email, with and without status', async () => {
    expect(emailsOf((await page('search=ZED')).body)).toEqual(extra);
    expect(emailsOf((await page('search=user4')).body)).toEqual(emails.filter((e) => e.startsWith('user4')));
    expect(emailsOf((await page('search=user4&status=unsubscribed')).body)).toEqual(['user42@example.com']);
    expect((await page('search=example.com')).body).toEqual([]);
  });

  it('continues with the cursor of X-Next-Cursor and Link until the end', async () => {
    const seen: string[] = [];
    let reply = await page('status=subscribed&count=7');
    for (;;) {
      seen.push(...emailsOf(reply.body));
      const cursor = reply.headers.get('x-next-cursor');
      if (!cursor) break;
      expect(reply.headers.get('link')).toContain(`cursor=${cursor}`);
      reply = await page(`status=subscribed&count=7&cursor=${cursor}`);
    }
    expect(seen).toEqual([...emails, ...extra].filter((_, i) => i % 3 !== 0).sort());
  });

  it("refuses a cursor of another listing or another client's list", async () => {
    const first = await page('count=5');
    const cursor = first.headers.get('x-next-cursor')!;
    const otherStatus = await page<ErrorBody>(`status=subscribed&count=5&cursor=${cursor}`);
    expect(otherStatus.status).toBe(400);
    expect(otherStatus.body.cause).toMatch(/^query.cursor: not a cursor of this listing/);
    const other = await newClient(service);
    const stolen = await request(`${service.url}/v1/newsletters/lists/${other.defaultListId}/subscribers?cursor=${cursor}`, { token: other.token });
    expect(stolen.status).toBe(400);
  });

  it('refuses a cursor of another search, a partial key or a forged key, with a 400', async () => {
    const enc = (key: object) => Buffer.from(JSON.stringify(key)).toString('base64url');
    const bySearch = (await page('search=user&count=3')).headers.get('x-next-cursor')!;
    const statusCursor = (await page('status=subscribed&count=3')).headers.get('x-next-cursor')!;
    const decoded = JSON.parse(Buffer.from(statusCursor, 'base64url').toString()) as Record<string, string>;
    for (const [query, cursor] of [
      ['search=zed', bySearch],
      ['', enc({ pk: decoded.pk })],
      ['', enc({ pk: decoded.pk, sk: decoded.sk, extra: 'x' })],
      ['status=subscribed', enc({ ...decoded, sk: 'SUB#someone-else@example.com' })],
      ['status=subscribed', enc({ ...decoded, pk: 'SUBS#other#1' })],
    ]) {
      const reply = await page<ErrorBody>(`${query}&cursor=${cursor}`);
      expect(reply.status, `${query} ${cursor}`).toBe(400);
      expect(reply.body.cause).toMatch(/^query.cursor: not a cursor of this listing/);
    }
  });

  it.each([
    ['status=pending', 'query.status: status must be subscribed or unsubscribed'],
    ['count=0', 'query.count: count must be an integer from 1 to 1000'],
    ['count=1001', 'query.count: count must be an integer from 1 to 1000'],
    ['count=ten', 'query.count: count must be an integer from 1 to 1000'],
    ['offset=-1', 'query.offset: offset must be an integer from 0 to 100000000'],
    ['offset=5&cursor=abc', 'query: offset and cursor cannot be combined'],
    ['cursor=not-base64-json', 'query.cursor: not a cursor of this listing (use the X-Next-Cursor of the previous page with the same status and search)'],
  ])('rejects %s', async (query, cause) => {
    const reply = await page(query);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, cause });
  });
});
