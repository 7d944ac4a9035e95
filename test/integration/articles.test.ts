/**
 * The article catalogue over HTTP (PUT, GET, DELETE /v1/articles) and what
 * it does to recommendations: a catalogue article is recommended before its
 * first reader while fresh; a deleted one never again.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { createBlock } from '../../shared/clients/clients.js';
import { ddb, tableName } from '../../shared/db/client.js';
import { keys } from '../../shared/db/keys.js';
import { DynamoStore } from '../../shared/recos/dynamo-store.js';
import { captureOutput } from '../helpers/logs.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { newClient, request, useService, type TestClient, type ApiBody, type ErrorBody, type RecommendationsBody } from '../helpers/service.js';

const service = useService();
const site = () => `https://news-${randomUUID().slice(0, 8)}.catalogue.example`;
const newCatalogueClient = () => newClient(service, { siteHosts: ['*.catalogue.example'] });
const hoursAgo = (h: number) => Math.floor(Date.now() / 1000 - h * 3600);
const articlesUrl = () => `${service.url}/v1/articles`;

const put = <T = ApiBody<'articlesPut'>>(client: TestClient, body: unknown) => request<T>(`${service.url}/v1/articles`, { method: 'PUT', token: client.token, body });
// Listing and recommendations wait for the page views tracked so far to be applied (the tracking queue drained), as a reader a few seconds later would see them.
const list = async <T = ApiBody<'articlesGet'>>(client: TestClient, query = '') => (await service.drain(), request<T>(`${service.url}/v1/articles${query ? `?${query}` : ''}`, { token: client.token }));
const recos = async <T = RecommendationsBody>(block: string, userId: string, query = '') => (await service.drain(), request<T>(`${service.url}/v1/clients/${block}/users/${userId}/recommendations${query ? `?${query}` : ''}`));
const track = (client: TestClient, userId: string, url: string, extra: Record<string, unknown> = {}) =>
  request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body: { user_id: userId, url, ...extra } });
const guidsOf = (body: { result: { recommendation: Array<{ guid: string }> } }) => body.result.recommendation.map((r) => r.guid);

describe('PUT /v1/articles', () => {
  it('creates and updates articles and reports each line: created, updated, or rejected with its cause', async () => {
    const client = await newCatalogueClient();
    const s = site();
    const publishedA = hoursAgo(2);
    const first = await put(client, [
      { url: `${s}/a?utm_source=rss#top`, title: 'A', description: 'About A', image: `${s}/a.jpg`, category: 'World', themes: 'Climate, Politics', published_time: publishedA },
      { url: `${s}/b`, title: 'B', published_time: new Date(hoursAgo(1) * 1000).toISOString() },
    ]);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      created: 2,
      updated: 0,
      rejected: 0,
      lines: [
        { line: 1, status: 'created', url: `${s}/a`, guid: articleGuid(`${s}/a`) },
        { line: 2, status: 'created', url: `${s}/b`, guid: articleGuid(`${s}/b`) },
      ],
    });

    const second = await put(client, [
      { url: `${s}/a`, title: 'A, corrected' },
      { title: 'no url' },
      { url: 'https://elsewhere.example/x' },
      { url: 'ftp://files.example/x' },
      { url: `${s}/c`, title: 'x'.repeat(501) },
      'not an object',
      { url: `${s}/d`, title: 'D first' },
      { url: `${s}/d#again`, title: 'D second' },
    ]);
    expect(second.status, second.text).toBe(200);
    expect(second.body).toMatchObject({ created: 1, updated: 1, rejected: 6 });
    const causes = second.body.lines.map((l: { cause?: string }) => l.cause);
    expect(second.body.lines[0]).toEqual({ line: 1, status: 'updated', url: `${s}/a`, guid: articleGuid(`${s}/a`) });
    expect(causes[1]).toBe('body[1].url: is required');
    expect(causes[2]).toBe("body[2].url: host elsewhere.example is not one of the client's site hosts");
    expect(causes[3]).toBe('body[3].url: must be an absolute http(s) URL');
    expect(causes[4]).toBe('body[4].title: must be at most 500 characters');
    expect(causes[5]).toBe('body[5]: an article must be a JSON object');
    expect(causes[6]).toBe('body[6].url: the same article as line 8, which is applied instead');
    expect(second.body.lines[7]).toMatchObject({ line: 8, status: 'created', guid: articleGuid(`${s}/d`) });

    // Given fields replaced, absent ones kept; D has its last line's title.
    const listed = await list(client);
    expect(listed.status).toBe(200);
    const byUrl = new Map(listed.body.map((a: { url: string }) => [a.url, a]));
    expect(byUrl.get(`${s}/a`)).toEqual({
      guid: articleGuid(`${s}/a`),
      url: `${s}/a`,
      title: 'A, corrected',
      description: 'About A',
      image: `${s}/a.jpg`,
      category: 'World',
      themes: ['climate', 'politics'],
      published_time: publishedA,
      views: 0,
      clicks: 0,
    });
    expect(byUrl.get(`${s}/d`)).toMatchObject({ title: 'D second' });
    expect(byUrl.has(`${s}/c`)).toBe(false);
  });

  it('refuses what is not a batch of 1 to 1,000 articles, a client without site hosts, no token and a non-JSON body', async () => {
    const client = await newCatalogueClient();
    const s = site();
    for (const [body, cause] of [
      [[], 'body: the array is empty'],
      [Array.from({ length: 1001 }, (_, i) => ({ url: `${s}/${i}` })), 'body: at most 1000 articles per request'],
      [{ url: `${s}/x` }, 'body: must be a JSON array of articles'],
    ] as const) {
      const reply = await put<ErrorBody>(client, body);
      expect(reply.status).toBe(400);
      expect(reply.body.cause).toBe(cause);
    }
    const full = await put(client, Array.from({ length: 1000 }, (_, i) => ({ url: `${s}/${i}`, published_time: hoursAgo(i / 100) })));
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ created: 1000, rejected: 0 });
    // The fresh list keeps the newest 500 (written 100 at a time); recommendations take the newest of them first.
    const block = await createBlock(client.username, { rows: 5 });
    const newest = await recos(block, 'reader-of-1000');
    expect(guidsOf(newest.body)).toEqual([0, 1, 2, 3, 4].map((i) => articleGuid(`${s}/${i}`)));

    const noHosts = await newClient(service);
    const refused = await put<ErrorBody>(noHosts, [{ url: `${s}/x` }]);
    expect(refused.status).toBe(403);
    expect(refused.body.cause).toMatch(/no site hosts yet/);
    expect((await request(articlesUrl(), { method: 'PUT', body: [{ url: `${s}/x` }] })).status).toBe(401);
    const form = await request(articlesUrl(), { method: 'PUT', token: client.token, raw: 'url=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
  });
});

describe('GET /v1/articles', () => {
  it('pages newest first with a cursor, filters by category, and refuses a foreign cursor', async () => {
    const client = await newCatalogueClient();
    const s = site();
    const lines = Array.from({ length: 25 }, (_, i) => ({ url: `${s}/n${i}`, title: `N${i}`, category: i % 2 === 0 ? 'Even' : 'Odd', published_time: hoursAgo(i) }));
    expect((await put(client, lines)).status).toBe(200);
    const seen: string[] = [];
    let query = 'count=10';
    for (let page = 0; page < 5 && query; page++) {
      const reply = await list(client, query);
      expect(reply.status, reply.text).toBe(200);
      seen.push(...reply.body.map((a: { title: string }) => a.title));
      const cursor = reply.headers.get('x-next-cursor');
      if (cursor) expect(reply.headers.get('link')).toBe(`</v1/articles?count=10&cursor=${cursor}>; rel="next"`);
      query = cursor ? `count=10&cursor=${cursor}` : '';
    }
    expect(seen).toEqual(lines.map((l) => l.title));

    const even = await list(client, 'category=Even&count=1000');
    expect(even.body.map((a: { title: string }) => a.title)).toEqual(lines.filter((l) => l.category === 'Even').map((l) => l.title));
    expect((await list(client, 'category=even')).body).toEqual([]);

    const other = await newCatalogueClient();
    const cursor = (await list(client, 'count=1')).headers.get('x-next-cursor')!;
    const foreign = await list<ErrorBody>(other, `cursor=${cursor}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.cause).toMatch(/^query\.cursor: not a cursor of this catalogue/);
    expect((await list(client, 'count=0')).status).toBe(400);
    expect((await list<ErrorBody>(client, 'count=1001')).body.cause).toBe('query.count: must be at most 1000');
  });

  it('lists articles known from tracking too, with their views', async () => {
    const client = await newCatalogueClient();
    const url = `${site()}/tracked`;
    const published = hoursAgo(1);
    expect((await track(client, 'r1', url, { title: 'Tracked', published_time: published })).status).toBe(200);
    expect((await track(client, 'r2', url)).status).toBe(200);
    expect((await list(client)).body).toEqual([expect.objectContaining({ url, title: 'Tracked', views: 2, published_time: published })]);
  });
});

describe('catalogue articles in recommendations', () => {
  it('recommends a catalogue article before its first view while fresh, naming freshness in algo; not once older than the freshness window', async () => {
    const client = await newCatalogueClient();
    const s = site();
    const fresh = `${s}/just-published`;
    const old = `${s}/published-three-days-ago`;
    const publishedFresh = hoursAgo(1);
    expect((await put(client, [{ url: fresh, title: 'Fresh', published_time: publishedFresh }, { url: old, title: 'Old', published_time: hoursAgo(72) }])).status).toBe(200);
    const block = await createBlock(client.username);
    const first = await recos(block, 'first-reader');
    expect(first.status, first.text).toBe(200);
    expect(guidsOf(first.body)).toEqual([articleGuid(fresh)]);
    expect(first.body.algo).toBe('freshness');
    expect(first.body.result.recommendation[0]).toMatchObject({ title: 'Fresh', published_time: publishedFresh });

    // A block whose freshness window (30 min) the article has outgrown: nothing to recommend yet.
    const narrow = await createBlock(client.username, { freshnessHours: 0.5 });
    const none = await recos(narrow, 'first-reader');
    expect(guidsOf(none.body)).toEqual([]);
    expect(none.body.algo).toBe('none');
  });

  it('deletes an article with its counters: never recommended again, later views not counted, the redirect gone; PUT brings it back new', async () => {
    const client = await newCatalogueClient();
    const s = site();
    const [a, b] = [`${s}/a`, `${s}/b`];
    for (const reader of ['r1', 'r2', 'r3']) {
      expect((await track(client, reader, a, { title: 'A', published_time: hoursAgo(3) })).status).toBe(200);
      expect((await track(client, reader, b, { title: 'B', published_time: hoursAgo(3) })).status).toBe(200);
    }
    const block = await createBlock(client.username);
    expect(guidsOf((await recos(block, 'newcomer', `page_url=${encodeURIComponent(b)}`)).body)).toEqual([articleGuid(a)]);

    const deleted = await request(`${articlesUrl()}?url=${encodeURIComponent(`${a}?utm_medium=x`)}`, { method: 'DELETE', token: client.token });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ status: 'OK', url: a, guid: articleGuid(a) });
    expect((await request(`${articlesUrl()}?url=${encodeURIComponent(a)}`, { method: 'DELETE', token: client.token })).status).toBe(404);
    expect((await request(`${articlesUrl()}?url=${encodeURIComponent(`${s}/never`)}`, { method: 'DELETE', token: client.token })).status).toBe(404);
    expect((await request<ErrorBody>(`${articlesUrl()}?url=nope`, { method: 'DELETE', token: client.token })).body.cause).toBe('query.url: must be an absolute http(s) URL');

    // A later view is accepted and not counted; the article stays out of rankings, listing and redirects.
    expect((await track(client, 'r4', a, { title: 'A' })).body).toEqual({ status: 'OK', guid: articleGuid(a) });
    expect(guidsOf((await recos(block, 'newcomer', `page_url=${encodeURIComponent(b)}`)).body)).toEqual([]);
    expect(guidsOf((await recos(block, 'another')).body)).toEqual([articleGuid(b)]);
    expect((await list(client)).body.map((x: { url: string }) => x.url)).toEqual([b]);
    expect((await request(`${service.url}/v1/r/${block}/${articleGuid(a)}`)).status).toBe(404);

    // A click or a view whose write lands after the deletion leaves the tombstone as it is (no clicks, no popularity key to revive).
    const store = new DynamoStore();
    expect(await store.recordClick(client.username, articleGuid(a))).toBeUndefined();
    const tombstone = (await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.article(client.username, articleGuid(a)), ConsistentRead: true }))).Item!;
    expect(tombstone.clicks).toBeUndefined();
    expect(tombstone.gsi1sk).toBeUndefined();

    const back = await put(client, [{ url: a, title: 'A again' }]);
    expect(back.body.lines[0]).toMatchObject({ status: 'created' });
    expect((await list(client)).body.find((x: { url: string }) => x.url === a)).toMatchObject({ title: 'A again', views: 0, clicks: 0 });
  });

  it('a DELETE that failed after its tombstone is finished by the retry: the co-visit item goes too', async () => {
    const client = await newCatalogueClient();
    const s = site();
    const [a, b] = [`${s}/a`, `${s}/b`];
    expect((await track(client, 'r1', a, { published_time: hoursAgo(3) })).status).toBe(200);
    expect((await track(client, 'r1', b, { published_time: hoursAgo(3) })).status).toBe(200);
    const covisitItem = async () => (await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.covisits(client.username, articleGuid(a)), ConsistentRead: true }))).Item;
    await service.drain();
    expect(await covisitItem()).toBeDefined();
    const send = ddb.send.bind(ddb);
    let failures = 1;
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the SDK's send overloads include a callback form returning void; this mock is the Promise form
    vi.spyOn(ddb, 'send').mockImplementation(((command: unknown) => {
      if (command instanceof DeleteCommand && failures-- > 0) return Promise.reject(Object.assign(new Error('injected fault'), { name: 'InternalServerError', $retryable: {} }));
      return send(command as never);
    }) as typeof ddb.send);
    const output = captureOutput();
    let first;
    try {
      first = await request(`${articlesUrl()}?url=${encodeURIComponent(a)}`, { method: 'DELETE', token: client.token });
    } finally {
      output.restore();
      vi.restoreAllMocks();
    }
    expect(first.status).toBeGreaterThanOrEqual(500);
    expect(await covisitItem()).toBeDefined();
    // The retry finds the tombstone: 404 (already deleted), and the clean-up is done.
    expect((await request(`${articlesUrl()}?url=${encodeURIComponent(a)}`, { method: 'DELETE', token: client.token })).status).toBe(404);
    expect(await covisitItem()).toBeUndefined();
  });
});

describe('hostile dates and text through the API and tracking', () => {
  const RULE = 'must be Unix seconds or an ISO 8601 date from 1970 to 9999-12-31 (seconds 0 to 253402300799; milliseconds 253402300800 to 253402300799999)';

  it('PUT stores far-ahead dates exactly (before: 9999-12-31 as 1978-01-11, 6000-01-01 as 1974) and rejects the line of one outside the range with its cause (before: +275760 as 2243)', async () => {
    const client = await newCatalogueClient();
    const s = site();
    const reply = await put(client, [
      { url: `${s}/far`, published_time: '9999-12-31T00:00:00Z' },
      { url: `${s}/y6000`, published_time: '6000-01-01T00:00:00Z' },
      { url: `${s}/offset`, published_time: '2025-06-10T06:30:00.5+02:00' },
      { url: `${s}/seconds`, published_time: 253_402_300_799 },
      { url: `${s}/beyond`, published_time: '+275760-09-13T00:00:00Z' },
      { url: `${s}/before`, published_time: '1969-12-31T23:59:59Z' },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ created: 4, rejected: 2 });
    expect(reply.body.lines.slice(4).map((l) => l.cause)).toEqual([
      `body[4].published_time: ${RULE}: "+275760-09-13T00:00:00Z" is after 9999-12-31T23:59:59Z`,
      `body[5].published_time: ${RULE}: "1969-12-31T23:59:59Z" is before 1970-01-01T00:00:00Z`,
    ]);
    const listed = (await list(client)).body as Array<{ url: string; published_time: number }>;
    expect(listed.map((a) => [a.url.slice(s.length), a.published_time])).toEqual([
      ['/seconds', 253_402_300_799],
      ['/far', 253_402_214_400],
      ['/y6000', 127_174_492_800],
      ['/offset', 1_749_529_800],
    ]);
  });

  it('tracking refuses a date outside the range with a 400 that says why', async () => {
    const client = await newCatalogueClient();
    const reply = await track(client, 'u1', `${site()}/a`, { published_time: '+275760-09-13T00:00:00Z' });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, cause: `body.published_time: ${RULE}: "+275760-09-13T00:00:00Z" is after 9999-12-31T23:59:59Z` });
  });

  it('text from PUT and from the public tracking key is stored as plain text: no markup, no control characters', async () => {
    const client = await newCatalogueClient();
    const s = site();
    const put1 = await put(client, [{ url: `${s}/put`, title: '<img src=x onerror=alert(1)>Put <b>title</b>', description: 'One\u0000\ntwo<script>', category: '<i>World</i>', themes: '<b>Climate</b>, 1 < 2, x<y' }]);
    expect(put1.body).toMatchObject({ created: 1, rejected: 0 });
    // Form body, as the browser library sends it.
    const form = new URLSearchParams({ user_id: 'u1', url: `${s}/tracked`, title: '<svg onload=alert(2)>Tracked', category: 'News<!--', themes: 'a,<b>b</b>' });
    const tracked = await request(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', raw: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' } });
    expect(tracked.status, tracked.text).toBe(200);
    const listed = (await list(client)).body as Array<{ url: string; title: string; description: string; category: string; themes: string[] }>;
    const byPath = Object.fromEntries(listed.map((a) => [a.url.slice(s.length), a]));
    expect(byPath['/put']).toMatchObject({ title: 'Put title', description: 'One two', category: 'World', themes: ['climate', '1 < 2', 'x'] });
    // "<y" would open a tag in a page, and it is never closed: dropped to the end, as a browser would.
    expect(byPath['/tracked']).toMatchObject({ title: 'Tracked', category: 'News', themes: ['a', 'b'] });
  });
});
