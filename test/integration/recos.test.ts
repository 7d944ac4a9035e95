import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBlock, setSignedIds, setSiteHosts } from '../../shared/clients/clients.js';
import { readerSignature } from '../../shared/recos/reader-ids.js';
import { dropReadCaches } from '../../shared/recos/service.js';
import { DynamoStore } from '../../shared/recos/dynamo-store.js';
import { applySubscribers } from '../../shared/subscribers/service.js';
import { articleGuid } from '../../shared/recos/urls.js';
import { newClient, request, useService, type ApiBody, type ErrorBody, type LegacyRecommendationsBody, type RecommendationsBody, type TestClient } from '../helpers/service.js';

const service = useService();
/** Fresh sites of the test clients, all under their site hosts entry `*.recos.example`. */
const site = () => `https://news-${randomUUID().slice(0, 8)}.recos.example`;
/** A fresh client whose site hosts cover `site()`. */
const newRecosClient = (siteHosts = ['*.recos.example']) => newClient(service, { siteHosts });
const nowIso = (hoursAgo = 1) => new Date(Date.now() - hoursAgo * 3600_000).toISOString();

async function track<T = ApiBody<'trackPost'>>(client: TestClient, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request<T>(`${service.url}/v1/track/${client.trackingKey}`, { method: 'POST', body, headers });
}

async function read(client: TestClient, userId: string, url: string, extra: Record<string, unknown> = {}) {
  const reply = await track(client, { user_id: userId, url, title: `Title of ${url}`, published_time: nowIso(), ...extra });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.guid;
}

/** A request after the page views tracked so far are applied (the tracking queue drained): what a reader sees a few seconds later. */
async function settled<T = RecommendationsBody>(url: string, init?: Parameters<typeof request>[1]) {
  await service.drain();
  return request<T>(url, init);
}

function recosUrl(blockKey: string, userId: string, query = '') {
  return `${service.url}/v1/clients/${blockKey}/users/${encodeURIComponent(userId)}/recommendations${query ? `?${query}` : ''}`;
}

const guidsOf = (body: { result: { recommendation: Array<{ guid: string }> } }) => body.result.recommendation.map((r) => r.guid);

describe('POST /v1/track/<tracking_key>', () => {
  it('records a page view from JSON and returns the article guid (hash of the canonical URL)', async () => {
    const client = await newRecosClient();
    const url = `${site()}/a?utm_source=x#top`;
    const reply = await track(client, { user_id: 'u1', url, themes: ['Climate', ' politics '], category: 'World', published_time: 1_700_000_000 });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: 'OK', guid: articleGuid(url.replace('?utm_source=x#top', '')) });
  });

  it('takes the form body the library sends (no CORS preflight), themes as a comma-separated string', async () => {
    const client = await newRecosClient();
    const url = `${site()}/form-page`;
    const form = new URLSearchParams({ user_id: 'u1', url, title: 'Form page', themes: 'a,b', published_time: nowIso() });
    const reply = await request(`${service.url}/v1/track/${client.trackingKey}`, {
      method: 'POST',
      raw: form.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
    });
    expect(reply.status, reply.text).toBe(200);
    const block = await createBlock(client.username);
    const recos = await settled(recosUrl(block, 'someone-else'));
    expect(recos.body.result.recommendation).toEqual([
      expect.objectContaining({ guid: articleGuid(url), title: 'Form page', url: expect.stringMatching(new RegExp(`^${service.url}/v1/r/${block}/${articleGuid(url)}\\?rid=${recos.body.recomm_id}\\.[A-Za-z0-9_-]{16}$`)) as string }),
    ]);
  });

  it('answers 400 with a cause on bad input and 404 on an unknown key', async () => {
    const client = await newRecosClient();
    expect((await track(client, { url: `${site()}/x` })).body).toEqual({ status: 400, cause: 'body.user_id: is required' });
    expect((await track<ErrorBody>(client, { user_id: 'u', url: 'javascript:alert(1)' })).body.cause).toBe('body.url: must be an absolute http(s) URL');
    expect((await track<ErrorBody>(client, { user_id: 'u', url: `${site()}/x`, themes: 5 })).body.cause).toMatch(/^body\.themes: must be an array of strings or a comma-separated string/);
    expect((await track<ErrorBody>(client, { user_id: 'u', url: `${site()}/x`, published_time: 'yesterday' })).body.cause).toMatch(/^body\.published_time: must be Unix seconds or an ISO 8601 date/);
    expect((await track(client, { user_id: '', url: `${site()}/x` })).status).toBe(400);
    const unknown = await request(`${service.url}/v1/track/no-such-key`, { method: 'POST', body: { user_id: 'u', url: `${site()}/x` } });
    expect(unknown).toMatchObject({ status: 404, body: { status: 404, cause: 'Unknown tracking key' } });
  });

  it('counts every one of many concurrent views of one article (no lost update, no conflict error)', async () => {
    const client = await newRecosClient();
    const url = `${site()}/breaking`;
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => track(client, { user_id: `r${i}`, url, title: `v${i}` })));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(200));
    await service.drain();
    const [article] = await new DynamoStore().articles(client.username, [articleGuid(url)]);
    expect(article.views).toBe(20);
    const [popular] = await new DynamoStore().hotArticles(client.username, 1);
    expect(popular.guid).toBe(article.guid);
    expect(popular.hot).toBeCloseTo(article.hot, 6);
  });

  it("refuses a browser page reporting another site's URL", async () => {
    const client = await newRecosClient(['victim.example', 'www.mine.example']);
    const reply = await track<ErrorBody>(client, { user_id: 'u', url: 'https://victim.example/a' }, { origin: 'https://attacker.example' });
    expect(reply.status).toBe(400);
    expect(reply.body.cause).toMatch(/^body\.url: a page of attacker\.example can only track URLs of its own site/);
    expect((await track(client, { user_id: 'u', url: 'https://www.mine.example/a' }, { origin: 'https://mine.example' })).status).toBe(200);
  });

  it("refuses (403) pages outside the client's site hosts, from a browser or a back end, and records nothing", async () => {
    const client = await newRecosClient(['news.example.com', '*.blogs.example.com']);
    const block = await createBlock(client.username);
    // The attack: another site loads the library with the publisher's public tracking key and tracks its own pages.
    const evil = await track(client, { user_id: 'u', url: 'https://evil.example/phish', title: 'Click me' }, { origin: 'https://evil.example' });
    expect(evil).toMatchObject({ status: 403, body: { status: 403, cause: "body.url: host evil.example is not one of the client's site hosts" } });
    const backEnd = await track(client, { user_id: 'u', url: 'https://evil.example/phish' });
    expect(backEnd.status).toBe(403);
    for (const url of ['https://www.news.example.com/a', 'https://blogs.example.com/a', 'https://news.example.com.evil.example/a']) {
      expect((await track(client, { user_id: 'u', url })).status, url).toBe(403);
    }
    expect(guidsOf((await settled(recosUrl(block, 'someone'))).body)).toEqual([]);
    expect((await settled(`${service.url}/v1/r/${block}/${articleGuid('https://evil.example/phish')}`)).status).toBe(404);

    expect((await track(client, { user_id: 'u', url: 'https://news.example.com/a' }, { origin: 'https://news.example.com' })).status).toBe(200);
    expect((await track(client, { user_id: 'u', url: 'https://alice.blogs.example.com/b' })).status).toBe(200);
    expect(new Set(guidsOf((await settled(recosUrl(block, 'someone'))).body))).toEqual(
      new Set(['https://news.example.com/a', 'https://alice.blogs.example.com/b'].map(articleGuid)),
    );
  });

  it('refuses (403) all tracking of a client without site hosts, until support sets them', async () => {
    const client = await newClient(service);
    const reply = await track<ErrorBody>(client, { user_id: 'u', url: 'https://news.example.com/a' });
    expect(reply.status).toBe(403);
    expect(reply.body.cause).toMatch(/^body\.url: the client has no site hosts yet, so tracking is off/);
    await setSiteHosts(client.username, 'news.example.com');
    expect((await track(client, { user_id: 'u', url: 'https://news.example.com/a' })).status).toBe(200);
  });
});

describe('GET /v1/clients/<block_key>/users/<user_id>/recommendations', () => {
  it('answers 404 for an unknown block key and 400 for invalid parameters', async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username);
    expect(await settled(recosUrl('no-such-block', 'u'))).toMatchObject({ status: 404, body: { status: 404, cause: 'Unknown block key' } });
    for (const [query, cause] of [
      ['rows=abc', /^query\.rows: must be a non-negative integer/],
      ['rows=0', /^query\.rows: must be at least 1/],
      ['start=-1', /^query\.start: must be a non-negative integer/],
      ['shuffle=maybe', /^query\.shuffle: must be true or false/],
      ['redir_https=yes', /^query\.redir_https: must be true or false/],
      ['noredir=2', /^query\.noredir: must be true or false/],
      ['callback=alert(1)', /^query\.callback: must be an identifier or a dotted path/],
      ['excluded[]=not-a-url', /^query\.excluded\[\]: "not-a-url" is neither an absolute http\(s\) URL nor an article guid$/],
      ['page_url=ftp://x', /^query\.page_url: must be an absolute http\(s\) URL/],
      ['format=xml', /^query\.format: must be smart-section or legacy/],
    ] as const) {
      const reply = await settled<ErrorBody>(recosUrl(block, 'u', query));
      expect(reply.status, query).toBe(400);
      expect(reply.body.cause, query).toMatch(cause);
    }
  });

  it('never recommends the current page (referer or page_url), read articles, excluded URLs or stale articles', async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username, { maxAgeDays: 7 });
    const s = site();
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((p) => `${s}/${p}`);
    for (const url of [a, b, c, d]) await read(client, 'crowd', url);
    await read(client, 'crowd', e, { published_time: nowIso(24 * 30) });
    await read(client, 'reader', b);
    const all = await settled(recosUrl(block, 'reader'));
    expect(new Set(guidsOf(all.body))).toEqual(new Set([a, c, d].map(articleGuid)));

    const withReferer = await settled(recosUrl(block, 'reader'), { headers: { referer: `${a}#comments` } });
    expect(new Set(guidsOf(withReferer.body))).toEqual(new Set([c, d].map(articleGuid)));
    const withPageUrl = await settled(recosUrl(block, 'reader', `page_url=${encodeURIComponent(c)}&excluded[]=${encodeURIComponent(d)}`), {
      headers: { referer: s },
    });
    expect(guidsOf(withPageUrl.body)).toEqual([articleGuid(a)]);
  });

  it('ranks what readers of this page also read first (co-visits from sessions), and names the algorithm', async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username);
    const s = site();
    const page = `${s}/page`;
    const alsoRead = `${s}/also-read`;
    const popular = Array.from({ length: 4 }, (_, i) => `${s}/popular-${i}`);
    for (let r = 0; r < 6; r++) for (const url of popular) await read(client, `crowd-${r}`, url);
    for (let r = 0; r < 2; r++) {
      await read(client, `fan-${r}`, page);
      await read(client, `fan-${r}`, alsoRead);
    }
    const cold = await settled(recosUrl(block, 'newcomer'));
    // All just published: the freshness signal serves them too.
    expect(cold.body.algo).toBe('popularity+freshness');
    expect(guidsOf(cold.body).slice(0, 4).sort()).toEqual(popular.map(articleGuid).sort());

    const onPage = await settled(recosUrl(block, 'newcomer', `page_url=${encodeURIComponent(page)}`));
    expect(guidsOf(onPage.body)[0]).toBe(articleGuid(alsoRead));
    expect(onPage.body.algo).toMatch(/^covisit\+.*popularity\+freshness$/);
    expect(onPage.body.status).toBe('OK');
  });

  it('recommends a just-published article ahead of older, more-read ones until it is older than the block freshness window', async () => {
    const client = await newRecosClient();
    const s = site();
    const older = Array.from({ length: 3 }, (_, i) => `${s}/older-${i}`);
    for (const [i, url] of older.entries()) for (let r = 0; r <= i; r++) await read(client, `crowd-${r}`, url, { published_time: nowIso(24 * 5) });
    const fresh = `${s}/fresh`;
    await read(client, 'author', fresh, { published_time: nowIso(0.5) });
    // Default block: 48 h window; the fresh article (1 view) beats older ones read once and twice.
    const block = await createBlock(client.username);
    const now = await settled(recosUrl(block, 'newcomer'));
    expect(now.status, now.text).toBe(200);
    const ranked = guidsOf(now.body);
    expect(ranked.indexOf(articleGuid(fresh))).toBeLessThan(ranked.indexOf(articleGuid(older[1])));
    expect(now.body.algo).toBe('popularity+freshness');
    // A block whose window is shorter than the article's age: no freshness, it falls behind the article read twice.
    const short = await createBlock(client.username, { freshnessHours: 0.25 });
    const later = await settled(recosUrl(short, 'newcomer'));
    const laterRanked = guidsOf(later.body);
    expect(laterRanked.indexOf(articleGuid(fresh))).toBeGreaterThan(laterRanked.indexOf(articleGuid(older[1])));
    expect(later.body.algo).toBe('popularity');
  });

  it("uses the reader's theme preferences, set through the preferences endpoint", async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username);
    const s = site();
    for (let i = 0; i < 3; i++) await read(client, `crowd-${i}`, `${s}/football`, { themes: 'football' });
    await read(client, 'crowd-0', `${s}/cooking`, { themes: 'cooking,food' });
    const before = await settled(recosUrl(block, 'gourmet'));
    expect(guidsOf(before.body)[0]).toBe(articleGuid(`${s}/football`));

    const put = await request<ApiBody<'preferencesPut'>>(`${service.url}/v1/users/gourmet/preferences`, { method: 'PUT', token: client.token, body: { themes: ['Cooking'] } });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ user_id: 'gourmet', themes: ['cooking'] });
    const after = await settled(recosUrl(block, 'gourmet'));
    expect(guidsOf(after.body)[0]).toBe(articleGuid(`${s}/cooking`));
    expect(after.body.algo).toContain('preferences');
  });

  it('gives both envelopes: smart-section by default, the earlier one by format or by block setting', async () => {
    const client = await newRecosClient();
    const smartBlock = await createBlock(client.username, { categoryDisplay: { world: 'World news' } });
    const legacyBlock = await createBlock(client.username, { envelope: 'legacy' });
    const url = `${site()}/one`;
    await read(client, 'crowd', url, { category: 'world', description: 'Desc', image: `${site()}/i.png`, published_time: Math.floor(Date.now() / 1000) - 3600 });
    const smart = await settled(recosUrl(smartBlock, 'u'));
    const item = smart.body.result.recommendation[0];
    expect(Object.keys(item).sort()).toEqual(['category', 'category_display', 'desc', 'guid', 'image', 'published_time', 'reason', 'title', 'url']);
    // Read by one reader an hour after publication: freshness or popularity says why (docs/api.md "reason").
    expect(item).toMatchObject({ category: 'world', category_display: 'World news', desc: 'Desc', reason: { type: expect.stringMatching(/^(fresh|popular)$/) as string } });
    expect(Number.isInteger(item.published_time)).toBe(true);

    for (const reply of [await settled<LegacyRecommendationsBody>(recosUrl(smartBlock, 'u', 'format=legacy')), await settled<LegacyRecommendationsBody>(recosUrl(legacyBlock, 'u'))]) {
      expect(reply.body).toEqual({ count: 1, start: 0, recommendations: [expect.any(Object) as object], recomm_id: expect.stringMatching(/^default\.[A-Za-z0-9_-]{16}$/) as string, variant: 'default' });
      expect(Object.keys(reply.body.recommendations[0]).sort()).toEqual(['category', 'desc', 'guid', 'image', 'title', 'url']);
    }
  });

  it('pages one stable ranking with start and rows; shuffle reorders only the page', async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username);
    const s = site();
    for (let i = 0; i < 7; i++) for (let v = 0; v <= i; v++) await read(client, `crowd-${v}`, `${s}/p${i}`);
    const whole = guidsOf((await settled(recosUrl(block, 'u', 'rows=7'))).body);
    expect(whole).toHaveLength(7);
    const pages = [];
    for (const start of [0, 3, 6]) {
      const reply = await settled<LegacyRecommendationsBody>(recosUrl(block, 'u', `rows=3&start=${start}&format=legacy`));
      expect(reply.body.start).toBe(start);
      pages.push(...reply.body.recommendations.map((r) => r.guid));
    }
    expect(pages).toEqual(whole);
    const shuffledPage = guidsOf((await settled(recosUrl(block, 'u', 'rows=3&shuffle=true'))).body);
    expect(new Set(shuffledPage)).toEqual(new Set(whole.slice(0, 3)));
  });

  it('answers JSONP for a valid callback, with nosniff', async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username);
    await read(client, 'crowd', `${site()}/j`);
    const reply = await settled(recosUrl(block, 'u', 'callback=window.myBlock.show'));
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    const match = /^\/\*\*\/window\.myBlock\.show\((.*)\);$/s.exec(reply.text);
    expect(match).not.toBeNull();
    expect(JSON.parse(match![1])).toMatchObject({ status: 'OK', result: { recommendation: [expect.any(Object)] } });
  });

  it('noredir adds url_raw; redir_https builds https redirection URLs', async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username);
    const url = `http://${site().slice(8)}/plain-http`;
    await read(client, 'crowd', url);
    const raw = (await settled(recosUrl(block, 'u', 'noredir=true'))).body.result.recommendation[0];
    expect(raw).toMatchObject({ url, url_raw: url });
    const answer = (await settled(recosUrl(block, 'u', 'redir_https=true'))).body;
    expect(answer.result.recommendation[0].url).toMatch(new RegExp(`^${service.url.replace('http:', 'https:')}/v1/r/${block}/${articleGuid(url)}\\?rid=${answer.recomm_id}\\.[A-Za-z0-9_-]{16}&https=1$`));
  });

  it("personalises a subscriber's recommendations by their guid (same id space as tracking)", async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username);
    const s = site();
    const guid = `subscriber-${randomUUID()}`;
    await read(client, 'crowd', `${s}/x`);
    await read(client, guid, `${s}/x`);
    expect(guidsOf((await settled(recosUrl(block, guid))).body)).toEqual([]);

    // Deleting the subscriber (POST /v1/users/delete) removes their reading history: the article is offered again.
    await applySubscribers(client.username, client.defaultListId, [{ line: 1, email: 'reader@example.com', guid }]);
    const deleted = await request(`${service.url}/v1/users/delete`, { method: 'POST', token: client.token, body: [{ email: 'reader@example.com' }] });
    expect(deleted.status).toBe(200);
    expect(guidsOf((await settled(recosUrl(block, guid))).body)).toEqual([articleGuid(`${s}/x`)]);
  });
});

describe('GET /v1/r/<block_key>/<guid> (click redirect)', () => {
  it('redirects (302) only to a known article of the block\'s client, https when asked', async () => {
    const client = await newRecosClient();
    const other = await newRecosClient();
    const block = await createBlock(client.username);
    const otherBlock = await createBlock(other.username);
    const url = `http://${site().slice(8)}/article?id=7`;
    const guid = await read(client, 'crowd', url);
    const recos = await settled(recosUrl(block, 'u'));
    const follow = await request(recos.body.result.recommendation[0].url);
    expect(follow.status).toBe(302);
    expect(follow.headers.get('location')).toBe(url);
    expect((await settled(`${service.url}/v1/r/${block}/${guid}?https=1`)).headers.get('location')).toBe(url.replace('http:', 'https:'));
    expect((await settled(`${service.url}/v1/r/${otherBlock}/${guid}`)).status).toBe(404);
    expect(guidsOf((await settled(recosUrl(otherBlock, 'u'))).body)).toEqual([]);
    expect((await settled(`${service.url}/v1/r/${block}/${'0'.repeat(20)}`)).status).toBe(404);
    expect((await settled(`${service.url}/v1/r/no-such-block/${guid}`)).status).toBe(404);
    const bad = await settled(`${service.url}/v1/r/${block}/${encodeURIComponent('https://evil.example')}`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('location')).toBeNull();
  });

  it("keeps to the block's hosts when the block lists them (they narrow the client's site hosts)", async () => {
    const client = await newRecosClient(['www.mine.example', 'elsewhere.example']);
    const block = await createBlock(client.username, { hosts: ['mine.example'] });
    const mine = await read(client, 'crowd', 'https://www.mine.example/ok');
    const foreign = await read(client, 'crowd', 'https://elsewhere.example/no');
    expect(guidsOf((await settled(recosUrl(block, 'u'))).body)).toEqual([mine]);
    expect((await settled(`${service.url}/v1/r/${block}/${mine}`)).status).toBe(302);
    expect((await settled(`${service.url}/v1/r/${block}/${foreign}`)).status).toBe(404);
  });

  it("denies articles outside the client's current site hosts (e.g. after support removed a host), and counts no click for them", async () => {
    const client = await newRecosClient(['old.example', 'kept.example']);
    const block = await createBlock(client.username);
    const old = await read(client, 'crowd', 'https://old.example/a');
    const kept = await read(client, 'crowd', 'https://kept.example/b');
    expect(new Set(guidsOf((await settled(recosUrl(block, 'u'))).body))).toEqual(new Set([old, kept]));

    await setSiteHosts(client.username, ['kept.example']);
    expect(guidsOf((await settled(recosUrl(block, 'u'))).body)).toEqual([kept]);
    const denied = await settled(`${service.url}/v1/r/${block}/${old}`);
    expect(denied).toMatchObject({ status: 404, body: { status: 404, cause: 'Unknown article' } });
    expect(denied.headers.get('location')).toBeNull();
    expect((await settled(`${service.url}/v1/r/${block}/${kept}`)).status).toBe(302);
    await service.drain();
    const clicks = Object.fromEntries((await new DynamoStore().articles(client.username, [old, kept])).map((a) => [a.guid, a.clicks]));
    expect(clicks).toEqual({ [old]: 0, [kept]: 1 });

    await setSiteHosts(client.username, []);
    expect(guidsOf((await settled(recosUrl(block, 'u'))).body)).toEqual([]);
    expect((await settled(`${service.url}/v1/r/${block}/${kept}`)).status).toBe(404);
  });
});

describe('/v1/users/<user_id>/preferences', () => {
  it('sets and reads themes per client, with a token', async () => {
    const a = await newRecosClient();
    const b = await newRecosClient();
    const empty = await request(`${service.url}/v1/users/r1/preferences`, { token: a.token });
    expect(empty.body).toEqual({ user_id: 'r1', themes: [], updated_at: null });
    const put = await request<ApiBody<'preferencesPut'>>(`${service.url}/v1/users/r1/preferences`, { method: 'PUT', token: a.token, body: { themes: 'Climate, cities,climate' } });
    expect(put.body.themes).toEqual(['climate', 'cities']);
    expect((await request<ApiBody<'preferencesGet'>>(`${service.url}/v1/users/r1/preferences`, { token: a.token })).body.themes).toEqual(['climate', 'cities']);
    expect((await request<ApiBody<'preferencesGet'>>(`${service.url}/v1/users/r1/preferences`, { token: b.token })).body.themes).toEqual([]);
    expect((await request(`${service.url}/v1/users/r1/preferences`)).status).toBe(401);
    const bad = await request(`${service.url}/v1/users/r1/preferences`, { method: 'PUT', token: a.token, body: { themes: Array.from({ length: 51 }, (_, i) => `t${i}`) } });
    expect(bad.body).toEqual({ status: 400, cause: 'body.themes: at most 50 themes' });
  });
});

describe('the library and the API description', () => {
  it('serves the library at /lib/v1 and lists the recommendation routes in /v1/openapi.json', async () => {
    const lib = await request(`${service.url}/lib/v1`);
    expect(lib.status).toBe(200);
    expect(lib.headers.get('content-type')).toContain('application/javascript');
    expect(lib.text).toContain('getRecommendations');
    const doc = (await request<{ paths: Record<string, object> }>(`${service.url}/v1/openapi.json`)).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/clients/{block_key}/users/{user_id}/recommendations', '/v1/track/{tracking_key}', '/v1/r/{block_key}/{guid}', '/v1/users/{user_id}/preferences']),
    );
    expect(Object.keys(doc.paths['/v1/users/{user_id}/preferences'])).toEqual(['get', 'put']);
  });
});

describe('signed reader ids (per client)', () => {
  it('with signed ids on, recommendations, tracking and preferences take a known reader id only with its signature; anonymous ids need none', async () => {
    const client = await newRecosClient();
    const block = await createBlock(client.username, {});
    const s = site();
    for (const p of ['a', 'b', 'c']) await read(client, 'crowd', `${s}/${p}`);
    // The victim (id = md5 of an email, guessable) read b.
    const victim = createHash('md5').update('victim@x.io').digest('hex');
    await read(client, victim, `${s}/b`);
    const { signingSecret } = await setSignedIds(client.username, true);
    // A new container: a warm one keeps the client record of a tracking key up to TRACKING_KEY_CACHE_SECONDS (recos-tracking-queue.test.ts).
    dropReadCaches();
    const sig = readerSignature(signingSecret!, victim);
    const wrong = readerSignature(signingSecret!, `${victim}x`);
    const forbidden = (reply: { status: number; body: unknown }, cause: RegExp) => {
      expect(reply.status).toBe(403);
      expect(reply.body).toEqual({ status: 403, cause: expect.stringMatching(cause) as string });
    };

    // Recommendations (JSON and JSONP): unsigned and wrongly signed are refused, so the victim's history does not show.
    forbidden(await settled(recosUrl(block, victim)), /^query\.sig: this publisher requires signed reader ids/);
    forbidden(await settled(recosUrl(block, victim, `sig=${wrong}`)), /^query\.sig: not the signature of this reader id/);
    forbidden(await settled(recosUrl(block, victim, 'sig=nothex')), /^query\.sig: not the signature/);
    const jsonp = await settled(recosUrl(block, victim, 'callback=show'));
    forbidden(jsonp, /^query\.sig/);
    expect(jsonp.headers.get('content-type')).toMatch(/^application\/json/);
    const signed = await settled(recosUrl(block, victim, `sig=${sig}`));
    expect(signed.status).toBe(200);
    expect(guidsOf(signed.body)).not.toContain(articleGuid(`${s}/b`));
    expect((await settled(recosUrl(block, victim, `sig=${sig}&callback=show`))).text).toMatch(/^\/\*\*\/ ?show\(|^show\(/);

    // Tracking: nobody can write reads under the victim's id without the signature.
    forbidden(await track(client, { user_id: victim, url: `${s}/c` }), /^body\.sig: this publisher requires signed reader ids/);
    forbidden(await track(client, { user_id: victim, url: `${s}/c`, sig: wrong }), /^body\.sig: not the signature/);
    expect((await track(client, { user_id: victim, url: `${s}/c`, sig })).status).toBe(200);

    // Preferences (token routes): the same rule.
    const prefs = (query = '', method = 'GET') =>
      request(`${service.url}/v1/users/${victim}/preferences${query}`, { method, token: client.token, body: method === 'PUT' ? { themes: ['x'] } : undefined });
    forbidden(await prefs(), /^query\.sig: this publisher requires signed reader ids/);
    forbidden(await prefs('', 'PUT'), /^query\.sig/);
    forbidden(await prefs(`?sig=${wrong}`, 'PUT'), /^query\.sig: not the signature/);
    expect((await prefs(`?sig=${sig}`, 'PUT')).status).toBe(200);
    expect((await prefs(`?sig=${sig}`)).body).toMatchObject({ themes: ['x'] });

    // Anonymous ids of the browser library need no signature; a 32-hex id without the prefix is not anonymous.
    const anon = `anon-${randomUUID().replace(/-/g, '')}`;
    expect((await track(client, { user_id: anon, url: `${s}/a` })).status).toBe(200);
    expect((await settled(recosUrl(block, anon))).status).toBe(200);
    expect((await settled(recosUrl(block, randomUUID().replace(/-/g, '')))).status).toBe(403);

    // Off again: unsigned ids work as before.
    await setSignedIds(client.username, false);
    expect((await settled(recosUrl(block, victim))).status).toBe(200);
  });
});
